#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/config_error.h"
#include "common/input_file.h"

using dlsim::ConfigError;
using dlsim::read_input_file;
namespace fs = std::filesystem;

namespace {

std::string error_of(const std::string& path) {
  try {
    read_input_file(path, "hw");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("an input file is read whole, bytes as they are") {
  const fs::path d = fs::temp_directory_path() / ("dlsim_input_file_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  const std::string bytes("a\0b\r\n\xff", 6);
  std::ofstream(d / "x.bin", std::ios::binary) << bytes;
  CHECK(read_input_file((d / "x.bin").string()) == bytes);
  std::ofstream(d / "empty.yaml").close();
  CHECK(read_input_file((d / "empty.yaml").string()).empty());
  // the path mistakes, each naming the path and the reason (not an empty file read as if it were one)
  CHECK(error_of(d.string()) == d.string() + ": 'hw': is a folder, not a file");
  CHECK(error_of((d / "missing.yaml").string()) == (d / "missing.yaml").string() + ": 'hw': cannot open: No such file or directory");
  const std::string long_name = (d / std::string(300, 'n')).string();
  CHECK(error_of(long_name) == long_name + ": 'hw': cannot open: File name too long");
  const std::string under_file = (d / "x.bin" / "y.yaml").string();
  CHECK(error_of(under_file) == under_file + ": 'hw': cannot open: Not a directory");
  CHECK(error_of("") == "<command line>: 'hw': an empty file name");
  fs::remove_all(d);
}
