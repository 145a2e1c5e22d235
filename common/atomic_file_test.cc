#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/config_error.h"
#include "common/testing/test_files.h"

using dlsim::ConfigError;
using dlsim::write_file_atomically;
namespace fs = std::filesystem;

namespace {

fs::path fresh_atomic_dir(const std::string& name) { return dlsim::testing::fresh_test_dir("dlsim_atomic_file_test", name); }


size_t files_in(const fs::path& d) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d)) ++n;
  return n;
}

// The message a failed write gives for `path`, "" when it did not throw.
std::string error_of(const std::string& path, const std::string& text, const std::string& key = "") {
  try {
    write_file_atomically(path, text, key);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a file is written, then replaced whole, and no temporary file stays beside it") {
  const fs::path d = fresh_atomic_dir("replace");
  const fs::path p = d / "out.json";
  write_file_atomically(p.string(), "first\n");
  CHECK(dlsim::testing::read_whole_file(p) == "first\n");
  write_file_atomically(p.string(), std::string(1 << 20, 'x'));
  CHECK(dlsim::testing::read_whole_file(p) == std::string(1 << 20, 'x'));
  write_file_atomically(p.string(), "");
  CHECK(dlsim::testing::read_whole_file(p).empty());
  CHECK(files_in(d) == 1);
}

TEST_CASE("a write that fails midway (the file-size limit, as a full disk) leaves the old file and no temporary") {
  const fs::path d = fresh_atomic_dir("full");
  const fs::path p = d / "trace.json";
  write_file_atomically(p.string(), "the old, complete file\n");
  rlimit old{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG instead of killing us
  rlimit small = old;
  small.rlim_cur = 4096;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  const std::string message = error_of(p.string(), std::string(100000, 'y'), "--chrome-trace");
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  CHECK(message == p.string() + ": '--chrome-trace': cannot write: File too large");
  CHECK(dlsim::testing::read_whole_file(p) == "the old, complete file\n");
  CHECK(files_in(d) == 1);
}

TEST_CASE("path mistakes are ConfigErrors naming the path the user gave") {
  const fs::path d = fresh_atomic_dir("mistakes");
  // a folder where a file name belongs: refused before anything is written
  CHECK(error_of(d.string(), "x") == d.string() + ": is a folder, not a file name to write");
  // a folder that does not exist
  const std::string missing = (d / "no-such-folder" / "x.csv").string();
  CHECK(error_of(missing, "x") == missing + ": cannot write: No such file or directory");
  // a name longer than the file system takes: the temporary name is shortened, the user's name is refused
  const std::string too_long = (d / std::string(300, 'n')).string();
  CHECK(error_of(too_long, "x") == too_long + ": cannot write: File name too long");
  // a file where a folder belongs
  write_file_atomically((d / "plain").string(), "x");
  const std::string under_file = (d / "plain" / "x.csv").string();
  CHECK(error_of(under_file, "x") == under_file + ": cannot write: Not a directory");
  CHECK(error_of("", "x", "--out") == "<command line>: '--out': an empty file name");
  CHECK(files_in(d) == 1);
}

TEST_CASE("a symbolic link is written through, and an existing file keeps its permissions") {
  const fs::path d = fresh_atomic_dir("link");
  const fs::path real = d / "real.yaml";
  write_file_atomically(real.string(), "old\n");
  REQUIRE(::chmod(real.c_str(), 0600) == 0);
  fs::create_symlink("real.yaml", d / "link.yaml");
  write_file_atomically((d / "link.yaml").string(), "new\n");
  CHECK(fs::is_symlink(d / "link.yaml"));
  CHECK(dlsim::testing::read_whole_file(real) == "new\n");
  CHECK((fs::status(real).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
}
