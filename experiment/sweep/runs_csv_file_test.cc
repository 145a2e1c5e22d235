#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "experiment/sweep/runs_csv_file.h"
#include "common/config_error.h"
#include "common/testing/test_files.h"

using namespace dlsim;
namespace fs = std::filesystem;

namespace {
fs::path temp_file(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("dlsim_runs_csv_file_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}
}  // namespace

TEST_CASE("rows appended from several threads arrive as whole lines") {
  const fs::path p = temp_file("threads.csv");
  std::ofstream(p) << "old content that must go\n";
  {
    RunsCsvFile f = RunsCsvFile::create(p.string(), "a,b");
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&f, t] {
        for (int i = 0; i < 200; ++i) f.append(std::to_string(t) + "," + std::string(static_cast<size_t>(100 + i), 'x'));
      });
    for (auto& t : threads) t.join();
  }
  std::istringstream in(dlsim::testing::read_whole_file(p));
  std::string line;
  std::getline(in, line);
  CHECK(line == "a,b");
  std::multiset<std::string> lines;
  while (std::getline(in, line)) lines.insert(line);
  CHECK(lines.size() == 800);
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < 200; ++i)
      CHECK(lines.count(std::to_string(t) + "," + std::string(static_cast<size_t>(100 + i), 'x')) == 1);
}

TEST_CASE("appending after a torn line first cuts it off") {
  const fs::path p = temp_file("torn.csv");
  std::ofstream(p, std::ios::binary) << "h\nrow1\nro";
  {
    RunsCsvFile f = RunsCsvFile::append_to(p.string(), 7);
    f.append("row2");
  }
  CHECK(dlsim::testing::read_whole_file(p) == "h\nrow1\nrow2\n");
}

TEST_CASE("a file is replaced whole, and a folder that cannot be written is a ConfigError") {
  const fs::path p = temp_file("atomic.csv");
  write_file_atomically(p.string(), "one\n");
  write_file_atomically(p.string(), "two\n");
  CHECK(dlsim::testing::read_whole_file(p) == "two\n");
  CHECK_FALSE(fs::exists(p.string() + ".tmp"));
  CHECK_THROWS_AS(write_file_atomically((temp_file("no-such-folder") / "x.csv").string(), "x"), ConfigError);
  CHECK_THROWS_AS(RunsCsvFile::append_to(temp_file("missing.csv").string(), 0), ConfigError);
}
