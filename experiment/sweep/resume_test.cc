// Rows back to their points: --merge of shards given in any order (a shell's glob puts shard-10 before shard-2),
// points that differ only in an hw_override list, and runs.csv files an older dlsim wrote.
#include "experiment/sweep/resume.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/config_error.h"
#include "experiment/sweep/csv_line.h"
#include "experiment/sweep/sweep.h"
#include "common/testing/test_files.h"

using namespace dlsim;
namespace fs = std::filesystem;

namespace {

fs::path fresh_resume_dir(const std::string& name) { return dlsim::testing::fresh_test_dir("dlsim_resume_test", name); }


// Figures that depend on every field of the point, the hardware label included: a row given to another point
// shows as a different file.
ExperimentResult fake_resume_run(const Experiment& e) {
  ExperimentResult r;
  r.experiment = e;
  uint64_t h = 1469598103934665603ull;
  for (char c : e.hw_label() + std::to_string(e.batch)) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  r.peak_live_bytes = 1000 + h % 100000;
  r.peak_reserved_bytes = r.peak_live_bytes + h % 777;
  r.iteration_time_us = static_cast<double>(h % 100000) / 7.0;
  return r;
}

SweepOptions quiet_options(const fs::path& dir) {
  SweepOptions opt;
  opt.results_dir = dir.string();
  opt.quiet = true;
  return opt;
}

// 12 points: 6 batches x 2 hardware overrides that differ only inside a list.
const char* kListSweep =
    "name: lists\nbase: {model: cifar-resnet20, batch: 1, hw: titan-x-pcie3, pool: cnmem, swap: none, "
    "concurrency: serial}\nvary:\n  batch: [1, 2, 3, 4, 5, 6]\n  hw_override:\n"
    "    - {kernel_times: [{signature: 'Relu in=f32[1]', ns: 5}, {signature: 'Relu in=f32[2]', ns: 9}]}\n"
    "    - {kernel_times: [{signature: 'Relu in=f32[1]', ns: 5}, {signature: 'Relu in=f32[2]', ns: 8}]}\n";

// The data rows of a runs.csv (no header), each with its line break.
std::string lines_of_file(const fs::path& p) {
  const std::string text = dlsim::testing::read_whole_file(p);
  return text.substr(text.find('\n') + 1);
}

// `row` with its key columns replaced by `key`, as a runs.csv of another dlsim version would hold it.
std::string rekeyed(const std::string& row, const std::string& key) {
  std::vector<std::string> f;
  split_csv_line(row, f);
  std::string out = key;
  for (size_t i = runs_csv_key_columns(); i < f.size(); ++i) out += "," + csv_escape(f[i]);
  return out;
}

}  // namespace

TEST_CASE("shards merged in a shell's glob order (shard-10 before shard-2) give the sweep's runs.csv") {
  const fs::path d = fresh_resume_dir("glob");
  const std::string file = (d / "lists.yaml").string();
  std::ofstream(file) << kListSweep;
  const Sweep s = load_sweep(file);
  REQUIRE(s.points.size() == 12);
  std::ostringstream log;
  const fs::path whole = d / "whole";
  run_sweep(s, quiet_options(whole), fake_resume_run, log);
  std::vector<std::string> dirs;
  for (size_t i = 1; i <= 12; ++i) {
    SweepOptions opt = quiet_options(d / "shards");
    opt.shard = parse_shard(std::to_string(i) + "/12");
    run_sweep(s, opt, fake_resume_run, log);
    dirs.push_back(sweep_results_dir(s, opt));
  }
  std::sort(dirs.begin(), dirs.end());  // as `shard-*` expands: shard-1, shard-10, shard-11, shard-12, shard-2, ...
  REQUIRE(fs::path(dirs[1]).filename() == "shard-10-of-12");
  const fs::path merged = d / "merged";
  merge_sweep(s, dirs, merged.string(), log);
  CHECK(dlsim::testing::read_whole_file(merged / "lists" / "runs.csv") == dlsim::testing::read_whole_file(whole / "lists" / "runs.csv"));
  CHECK(log.str().find("merged 12 files, 12 rows") != std::string::npos);

  // A shard's folder holds its own points' rows only: a row moved to another shard's file is refused.
  std::ofstream(fs::path(dirs[4]) / "runs.csv", std::ios::app) << lines_of_file(fs::path(dirs[0]) / "runs.csv");
  CHECK_THROWS_WITH(merge_sweep(s, dirs, merged.string(), log), Catch::Contains("another shard than shard-2-of-12"));
}

TEST_CASE("match_rows: points with equal keys take rows in point order, within their shard") {
  RunsCsvRows shard2;
  shard2.path = "shard-2-of-2/runs.csv";
  shard2.shard = parse_shard("2/2");
  shard2.lines = {"k,b", "k,a"};
  shard2.line_numbers = {2, 3};
  RunsCsvRows shard1 = shard2;
  shard1.path = "shard-1-of-2/runs.csv";
  shard1.shard = parse_shard("1/2");
  shard1.lines = {"k,c", "k,d"};
  std::vector<PointKeys> wanted(4);
  for (auto& w : wanted) w.key = "k", w.legacy = "k", w.legacy_exact = true;
  const auto rows = match_rows({shard2, shard1}, wanted, 1);
  CHECK(*rows[0] == "k,c");  // point 0 is shard 1's first
  CHECK(*rows[1] == "k,b");
  CHECK(*rows[2] == "k,d");
  CHECK(*rows[3] == "k,a");
}

TEST_CASE("a runs.csv an older dlsim wrote resumes where its keys are exact, and is refused where they were not") {
  const fs::path d = fresh_resume_dir("legacy");
  const std::string file = (d / "old.yaml").string();
  std::ofstream(file) << "name: old\nbase: {model: cifar-resnet20, batch: 1, hw: titan-x-pcie3, pool: cnmem, swap: none, "
                         "concurrency: serial, hw_override: {pcie: {latency_us: 3, h2d_pinned_gb_per_s: 20}}}\n"
                         "vary:\n  batch: [1, 2, 3]\n";
  const Sweep s = load_sweep(file);
  std::ostringstream log;
  run_sweep(s, quiet_options(d / "new"), fake_resume_run, log);
  const std::string expected = dlsim::testing::read_whole_file(d / "new" / "old" / "runs.csv");
  // Two rows with the keys an older dlsim wrote: the overrides in file order.
  std::string old = runs_csv_header() + "\n";
  for (size_t i : {2u, 0u}) {
    ExperimentResult r = fake_resume_run(s.points[i].parsed);
    bool exact = false;
    old += rekeyed(runs_csv_row(r, "ok", ""), runs_csv_legacy_key(s.points[i].parsed, exact)) + "\n";
    REQUIRE(exact);
  }
  REQUIRE(old.find("latency_us=3,pcie.h2d") != std::string::npos);
  fs::create_directories(d / "resumed" / "old");
  std::ofstream(d / "resumed" / "old" / "runs.csv") << old;
  SweepOptions opt = quiet_options(d / "resumed");
  opt.resume = true;
  int runs = 0;
  const SweepOutcome o = run_sweep(s, opt, [&](const Experiment& e) {
    ++runs;
    return fake_resume_run(e);
  }, log);
  CHECK(o.resumed == 2);
  CHECK(runs == 1);
  CHECK(dlsim::testing::read_whole_file(d / "resumed" / "old" / "runs.csv") == expected);  // the old rows now carry the exact key

  // Lists written as "...": which row is whose cannot be told.
  const std::string lists = (d / "lists.yaml").string();
  std::ofstream(lists) << kListSweep;
  const Sweep l = load_sweep(lists);
  bool exact = true;
  const std::string ambiguous = runs_csv_header() + "\n" +
      rekeyed(runs_csv_row(fake_resume_run(l.points[0].parsed), "ok", ""), runs_csv_legacy_key(l.points[0].parsed, exact)) + "\n";
  REQUIRE_FALSE(exact);
  fs::create_directories(d / "resumed" / "lists");
  std::ofstream(d / "resumed" / "lists" / "runs.csv") << ambiguous;
  CHECK_THROWS_WITH(run_sweep(l, opt, fake_resume_run, log), Catch::Contains(":2: row written by an older dlsim"));
  CHECK(dlsim::testing::read_whole_file(d / "resumed" / "lists" / "runs.csv") == ambiguous);  // left as it was
}
