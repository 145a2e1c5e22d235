#pragma once
// File helpers the tests of every part share (one definition, so that no test file keeps its own copy).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace dlsim::testing {

// The whole file, byte for byte ("" when it cannot be read: the test's comparison then fails and shows it).
inline std::string read_whole_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// An empty folder of this process's own under the temporary directory: <tmp>/<test>_<pid>/<name>, emptied first,
// so that runs of one test in parallel processes or one after another never see each other's files.
inline std::filesystem::path fresh_test_dir(const std::string& test, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path d = fs::temp_directory_path() / (test + "_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace dlsim::testing
