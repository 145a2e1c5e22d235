#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <algorithm>
#include <atomic>

#include "experiment/sweep/sweep.h"
#include "common/config_error.h"
#include "common/testing/test_files.h"

using namespace dlsim;
namespace fs = std::filesystem;

namespace {
std::string write_temp(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / ("dlsim_sweep_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}
const char* kSweep =
    "name: t\nbase:\n  model: resnet50\n  batch: 2\n  hw: h100-sxm\n  pool: cnmem\n  swap: none\n"
    "  concurrency: serial\nvary:\n  batch: [1, 2]\n  pool: [cuda-malloc, cnmem, {name: cnmem, init_size_mb: 64}]\n";
}  // namespace

TEST_CASE("a sweep expands to the cartesian product, first key slowest") {
  Sweep s = load_sweep(write_temp("s.yaml", kSweep));
  REQUIRE(s.points.size() == 6);
  CHECK(s.points[0].parsed.batch == 1);
  CHECK(s.points[0].parsed.pool.name == "cuda-malloc");
  CHECK(s.points[2].parsed.pool.label() == "cnmem(init_size_mb=64)");
  CHECK(s.points[3].parsed.batch == 2);
}

TEST_CASE("a run that fails becomes an error row and the sweep goes on") {
  Sweep s = load_sweep(write_temp("s.yaml", kSweep));
  SweepOptions opt;
  opt.results_dir = (fs::temp_directory_path() / ("dlsim_sweep_test_" + std::to_string(::getpid())) / "results").string();
  opt.quiet = true;
  int calls = 0;
  std::ostringstream log;
  int errors = run_sweep(s, opt, [&](const Experiment& e) {
    ++calls;
    if (calls == 2) throw std::runtime_error("boom");
    ExperimentResult r;
    r.experiment = e;
    r.peak_live_bytes = 100;
    r.peak_reserved_bytes = 150;
    r.oom = calls == 3;
    r.oom_where = "iteration 0, alloc of tensor 'x' (10 bytes) on stream 0";
    return r;
  }, log).errors;
  CHECK(calls == 6);
  CHECK(errors == 1);
  std::string csv = dlsim::testing::read_whole_file(fs::path(opt.results_dir) / "t" / "runs.csv");
  std::istringstream lines(csv);
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  REQUIRE(rows.size() == 7);
  CHECK(rows[0] == runs_csv_header());
  CHECK(rows[2].find(",error,") != std::string::npos);
  CHECK(rows[2].find("boom") != std::string::npos);
  CHECK(rows[3].find(",oom,") != std::string::npos);
  CHECK(rows[1].find(",0.5000,") != std::string::npos);  // fragmentation 150/100 - 1
  CHECK(fs::exists(fs::path(opt.results_dir) / "t" / "summary.md"));
}

TEST_CASE("sweep errors name the file, line and key") {
  CHECK_THROWS_WITH(load_sweep(write_temp("bad1.yaml", "name: t\nbase: {model: resnet50}\nvary:\n  bach: [1]\n")),
                    Catch::Contains("bad1.yaml:4") && Catch::Contains("vary.bach"));
  CHECK_THROWS_WITH(load_sweep(write_temp("bad2.yaml", "name: t\nbase:\n  model: resnet50\n  batch: 1\n  hw: h100-sxm\n"
                                                       "  pool: cnmem\n  swap: none\n  concurrency: serial\n"
                                                       "vary:\n  pool: [cnmem, nope]\n")),
                    Catch::Contains("unknown pool 'nope'"));
  CHECK_THROWS_WITH(load_sweep(write_temp("bad3.yaml", "name: a/b\nbase: {}\n")), Catch::Contains("'name'"));
}

TEST_CASE("a pool parameter out of range in vary stops the sweep before anything runs") {
  const std::string file = write_temp("bad4.yaml",
                                      "name: t\nbase:\n  model: resnet50\n  batch: 1\n  hw: h100-sxm\n"
                                      "  pool: cnmem\n  swap: none\n  concurrency: serial\n"
                                      "vary:\n  pool: [cnmem,\n         {name: cnmem, init_size_mb: -5}]\n");
  CHECK_THROWS_WITH(load_sweep(file), file + ":11: 'pool.init_size_mb': must be in [0, 1073741824], got -5");
}

TEST_CASE("a sweep that would expand past its point limit is refused before any point is built") {
  const std::string base = "name: t\nbase:\n  model: resnet50\n  batch: 1\n  hw: h100-sxm\n"
                           "  pool: cnmem\n  swap: none\n  concurrency: serial\n";
  // 2 x 3 = 6 points: within the default, above a file's max_points of 5 and a command line's 4.
  const std::string six = base + "vary:\n  batch: [1, 2]\n  iterations: [1, 2, 3]\n";
  CHECK(load_sweep(write_temp("six.yaml", six)).points.size() == 6);
  const std::string capped = write_temp("capped.yaml", "max_points: 5\n" + six);
  CHECK_THROWS_WITH(load_sweep(capped), capped + ":10: 'vary': expands to 6 points, above the limit of 5; raise it "
                                                 "with `max_points:` in the sweep file or `dlsim sweep --max-points N`");
  CHECK(load_sweep(capped, 6).points.size() == 6);  // the command line wins over the file
  CHECK_THROWS_WITH(load_sweep(write_temp("six2.yaml", six), 4), Catch::Contains("above the limit of 4"));
  // Five lists of 10,000 values: 10^20 points, more than a 64-bit count holds; the product must not wrap into a
  // small number that passes.
  std::string huge = base + "vary:\n";
  for (const char* key : {"batch", "iterations", "image_size", "seq_len", "optimizer"}) {
    huge += std::string("  ") + key + ": [";
    for (int i = 0; i < 10000; ++i) huge += (i ? ", " : "") + std::to_string(i + 1);
    huge += "]\n";
  }
  CHECK_THROWS_WITH(load_sweep(write_temp("huge.yaml", huge)),
                    Catch::Contains("expands to more than 2^64 points, above the limit of 100000"));
}

namespace {

// A stand-in for the simulator: figures that depend only on the point, a failure and an out-of-memory at fixed
// points, and a little work so that threads interleave.
ExperimentResult fake_sweep_run(const Experiment& e) {
  if (e.batch == 3 && e.pool.name == "cnmem") throw std::runtime_error("no, a multi-line\nfailure, \"quoted\"");
  ExperimentResult r;
  r.experiment = e;
  uint64_t h = static_cast<uint64_t>(e.batch) * 1000003u + e.pool.label().size() * 7919u;
  for (int i = 0; i < 20000; ++i) h = h * 6364136223846793005ull + 1442695040888963407ull;
  r.peak_live_bytes = 1000 + h % 100000;
  r.peak_reserved_bytes = r.peak_live_bytes + h % 777;
  r.iteration_time_us = static_cast<double>(h % 100000) / 7.0;
  r.alloc_time_us = static_cast<double>(h % 1000) / 3.0;
  r.oom = e.batch == 5 && e.pool.name == "cuda-malloc";
  if (r.oom) r.oom_where = "iteration 0, alloc of tensor 'x'";
  return r;
}

const char* kBigSweep =
    "name: big\nbase:\n  model: resnet50\n  batch: 2\n  hw: h100-sxm\n  pool: cnmem\n  swap: none\n"
    "  concurrency: serial\nvary:\n  batch: [1, 2, 3, 4, 5, 6, 7, 8]\n"
    "  pool: [cuda-malloc, cnmem, {name: cnmem, init_size_mb: 64}, pytorch-caching]\n  iterations: [1, 2, 3]\n";

fs::path absent_sweep_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("dlsim_sweep_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  return d;
}

SweepOptions quiet_options(const fs::path& dir, int jobs) {
  SweepOptions opt;
  opt.results_dir = dir.string();
  opt.quiet = true;
  opt.jobs = jobs;
  return opt;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("runs.csv and summary.md are byte for byte the same for any number of threads") {
  const Sweep s = load_sweep(write_temp("big.yaml", kBigSweep));
  REQUIRE(s.points.size() == 96);
  std::ostringstream log;
  const fs::path one = absent_sweep_dir("jobs1");
  const SweepOutcome first = run_sweep(s, quiet_options(one, 1), fake_sweep_run, log);
  CHECK(first.ran == 96);
  CHECK(first.errors == 6);  // batch 3 with either cnmem, at 3 iteration counts
  const std::string csv = dlsim::testing::read_whole_file(one / "big" / "runs.csv");
  const auto rows = lines_of(csv);
  REQUIRE(rows.size() == 97);
  // The error row keeps its place (batch 3 is the third block of 12 points; cnmem is the second pool).
  CHECK(rows[1 + 2 * 12 + 1 * 3].find(",error,") != std::string::npos);
  CHECK(rows[1 + 2 * 12 + 1 * 3].find("multi-line failure") != std::string::npos);  // one line
  for (int jobs : {2, 3, 8}) {
    const fs::path d = absent_sweep_dir("jobs" + std::to_string(jobs));
    const SweepOutcome o = run_sweep(s, quiet_options(d, jobs), fake_sweep_run, log);
    CHECK(o.errors == 6);
    CHECK(dlsim::testing::read_whole_file(d / "big" / "runs.csv") == csv);
    CHECK(dlsim::testing::read_whole_file(d / "big" / "summary.md") == dlsim::testing::read_whole_file(one / "big" / "summary.md"));
  }
}

TEST_CASE("a resumed sweep (--resume) runs only the points without a row and ends with the uninterrupted runs.csv") {
  const Sweep s = load_sweep(write_temp("big.yaml", kBigSweep));
  std::ostringstream log;
  const fs::path full = absent_sweep_dir("resume-full");
  run_sweep(s, quiet_options(full, 2), fake_sweep_run, log);
  const std::string expected = dlsim::testing::read_whole_file(full / "big" / "runs.csv");
  const auto rows = lines_of(expected);

  // What a killed sweep leaves: rows in the order runs finished (not the sweep's), and a torn last line.
  const fs::path part = absent_sweep_dir("resume-part");
  fs::create_directories(part / "big");
  std::string partial = rows[0] + "\n";
  std::vector<size_t> kept = {40, 3, 17, 96, 1, 28, 29, 30};  // 1-based rows of the full file
  for (size_t r : kept) partial += rows[r] + "\n";
  partial += rows[50].substr(0, 30);  // cut short
  std::ofstream(part / "big" / "runs.csv", std::ios::binary) << partial;

  std::atomic<int> runs{0};
  SweepOptions opt = quiet_options(part, 2);
  opt.resume = true;
  const SweepOutcome o = run_sweep(s, opt, [&](const Experiment& e) {
    ++runs;
    return fake_sweep_run(e);
  }, log);
  CHECK(o.resumed == kept.size());
  CHECK(o.ran == 96 - kept.size());
  CHECK(runs.load() == static_cast<int>(96 - kept.size()));
  CHECK(dlsim::testing::read_whole_file(part / "big" / "runs.csv") == expected);
  CHECK(dlsim::testing::read_whole_file(part / "big" / "summary.md") == dlsim::testing::read_whole_file(full / "big" / "summary.md"));

  // Resuming a finished sweep runs nothing and changes nothing.
  runs = 0;
  run_sweep(s, opt, [&](const Experiment& e) {
    ++runs;
    return fake_sweep_run(e);
  }, log);
  CHECK(runs.load() == 0);
  CHECK(dlsim::testing::read_whole_file(part / "big" / "runs.csv") == expected);
}

TEST_CASE("a resumed sweep (--resume) refuses a runs.csv it cannot read or did not write, and leaves it as it is") {
  const Sweep s = load_sweep(write_temp("big.yaml", kBigSweep));
  std::ostringstream log;
  const fs::path d = absent_sweep_dir("resume-bad");
  fs::create_directories(d / "big");
  const fs::path csv = d / "big" / "runs.csv";
  SweepOptions opt = quiet_options(d, 2);
  opt.resume = true;
  auto never = [](const Experiment&) -> ExperimentResult { throw std::logic_error("must not run"); };

  std::ofstream(csv) << "a,b,c\n1,2,3\n";
  CHECK_THROWS_WITH(run_sweep(s, opt, never, log), csv.string() + ":1: not a runs.csv of this dlsim version (its header "
                                                                  "differs from `dlsim sweep`'s); it is left as it is: use "
                                                                  "another --results-dir, or move it away");
  CHECK(dlsim::testing::read_whole_file(csv) == "a,b,c\n1,2,3\n");

  std::ofstream(csv, std::ios::trunc) << "";
  CHECK_THROWS_WITH(run_sweep(s, opt, never, log), Catch::Contains("empty or without a complete header line"));

  // A row of another sweep (batch 99 is no point of this one): named by its line.
  const std::string header = runs_csv_header();
  ExperimentResult other;
  other.experiment = s.points[0].parsed;
  other.experiment.batch = 99;
  const std::string foreign = header + "\n" + runs_csv_row(other, "ok", "") + "\n";
  std::ofstream(csv, std::ios::trunc) << foreign;
  CHECK_THROWS_WITH(run_sweep(s, opt, never, log), Catch::Contains(csv.string() + ":2: row matches no point of this sweep"));
  CHECK(dlsim::testing::read_whole_file(csv) == foreign);

  std::ofstream(csv, std::ios::trunc) << header << "\nresnet50,1,too,few\n";
  CHECK_THROWS_WITH(run_sweep(s, opt, never, log), Catch::Contains(":2: malformed row"));

  fs::remove(csv);
  fs::create_directories(csv);  // a folder where the file should be: unreadable
  CHECK_THROWS_AS(run_sweep(s, opt, never, log), ConfigError);
  CHECK(fs::is_directory(csv));
}

TEST_CASE("the shards of a sweep merge into the single-process runs.csv") {
  const Sweep s = load_sweep(write_temp("big.yaml", kBigSweep));
  std::ostringstream log;
  const fs::path full = absent_sweep_dir("shard-full");
  run_sweep(s, quiet_options(full, 1), fake_sweep_run, log);
  const fs::path d = absent_sweep_dir("shards");
  std::vector<std::string> dirs;
  size_t total = 0;
  for (size_t i = 1; i <= 3; ++i) {
    SweepOptions opt = quiet_options(d, 2);
    opt.shard = parse_shard(std::to_string(i) + "/3");
    const SweepOutcome o = run_sweep(s, opt, fake_sweep_run, log);
    total += o.ran;
    CHECK(o.points == 32);
    dirs.push_back(sweep_results_dir(s, opt));
    CHECK(dirs.back() == (d / "big" / ("shard-" + std::to_string(i) + "-of-3")).string());
  }
  CHECK(total == 96);
  const fs::path merged = absent_sweep_dir("merged");
  CHECK(merge_sweep(s, dirs, merged.string(), log) == 6);
  CHECK(dlsim::testing::read_whole_file(merged / "big" / "runs.csv") == dlsim::testing::read_whole_file(full / "big" / "runs.csv"));
  CHECK(dlsim::testing::read_whole_file(merged / "big" / "summary.md") == dlsim::testing::read_whole_file(full / "big" / "summary.md"));

  CHECK_THROWS_WITH(merge_sweep(s, {dirs[0], dirs[2]}, merged.string(), log),
                    Catch::Contains("32 of 96 points have no row in the merged files"));
  CHECK_THROWS_WITH(merge_sweep(s, {dirs[0], dirs[0], dirs[1], dirs[2]}, merged.string(), log),
                    Catch::Contains("row repeats a point that already has a row"));
}

TEST_CASE("a stopped sweep keeps its finished rows, writes no summary, and resumes to the full result") {
  const Sweep s = load_sweep(write_temp("big.yaml", kBigSweep));
  std::ostringstream log;
  const fs::path full = absent_sweep_dir("stop-full");
  run_sweep(s, quiet_options(full, 1), fake_sweep_run, log);
  const fs::path d = absent_sweep_dir("stop");
  std::atomic<bool> stop{false};
  std::atomic<int> runs{0};
  SweepOptions opt = quiet_options(d, 2);
  opt.stop = &stop;
  opt.resume_command = "dlsim sweep big.yaml --resume";
  std::ostringstream stop_log;
  const SweepOutcome o = run_sweep(s, opt, [&](const Experiment& e) {
    if (++runs == 20) stop = true;
    return fake_sweep_run(e);
  }, stop_log);
  CHECK(o.stopped);
  CHECK(o.ran >= 20);
  CHECK(o.ran < 96);
  CHECK(lines_of(dlsim::testing::read_whole_file(d / "big" / "runs.csv")).size() == o.ran + 1);
  CHECK_FALSE(fs::exists(d / "big" / "summary.md"));
  CHECK_THAT(stop_log.str(), Catch::Contains("to finish the sweep: dlsim sweep big.yaml --resume"));
  opt.stop = nullptr;
  opt.resume = true;
  const SweepOutcome rest = run_sweep(s, opt, fake_sweep_run, log);
  CHECK_FALSE(rest.stopped);
  CHECK(rest.ran == 96 - o.ran);
  CHECK(dlsim::testing::read_whole_file(d / "big" / "runs.csv") == dlsim::testing::read_whole_file(full / "big" / "runs.csv"));
}

TEST_CASE("a sweep over attention gives rows of distinct keys, the choice in the model column") {
  Sweep s = load_sweep(write_temp("att.yaml",
                                  "name: att\nbase: {model: qwen2.5-0.5b, batch: 1, seq_len: 64, hw: h100-sxm, pool: cnmem,"
                                  " swap: none, concurrency: serial}\nvary:\n  attention: [eager, sdpa-flash]\n"));
  REQUIRE(s.points.size() == 2);
  CHECK(runs_csv_key(s.points[0].parsed).rfind("qwen2.5-0.5b(attention=eager),1,", 0) == 0);
  CHECK(runs_csv_key(s.points[1].parsed).rfind("qwen2.5-0.5b(attention=sdpa-flash),1,", 0) == 0);
  // Without the key the model column is the model's name, as before.
  Sweep plain = load_sweep(write_temp("s.yaml", kSweep));
  CHECK(runs_csv_key(plain.points[0].parsed).rfind("resnet50,1,", 0) == 0);
}

namespace {
const char* kUnionSweep =
    "name: u\nbase:\n  model: resnet50\n  batch: 2\n  hw: h100-sxm\n  pool: pytorch-caching\n  swap: none\n"
    "  concurrency: serial\nvary:\n"
    "  - model: [resnet50, vgg16]\n    pool: [pytorch-caching, cnmem]\n"
    "  - model: [resnet50]\n    concurrency: [branch-streams, critical-path]\n"
    "baseline: {pool: pytorch-caching, concurrency: serial}\n";
}  // namespace

TEST_CASE("vary as a list of mappings runs the union of their products, mapping by mapping") {
  const Sweep s = load_sweep(write_temp("u.yaml", kUnionSweep));
  REQUIRE(s.points.size() == 6);  // 2 x 2 + 1 x 2, not the 2 x 2 x 3 of one product
  CHECK(s.varied_keys == std::vector<std::string>{"model", "pool", "concurrency"});
  CHECK(s.points[0].parsed.model == "resnet50");
  CHECK(s.points[1].parsed.pool.name == "cnmem");
  CHECK(s.points[2].parsed.model == "vgg16");
  CHECK(s.points[4].parsed.concurrency.name == "branch-streams");
  CHECK(s.points[4].parsed.pool.name == "pytorch-caching");  // the base's, not the first mapping's
  CHECK(s.points[5].parsed.concurrency.name == "critical-path");
  // Every point's baseline is itself with the baseline's keys set.
  CHECK(s.points[1].baseline_key == runs_csv_key(s.points[0].parsed));
  CHECK(s.points[2].baseline_key == runs_csv_key(s.points[2].parsed));
  CHECK(s.points[5].baseline_key == runs_csv_key(s.points[0].parsed));
  CHECK(s.baseline == "{pool: pytorch-caching, concurrency: serial}");
}

TEST_CASE("a vary list's mistakes name the file, the line and the entry") {
  const std::string base = "name: t\nbase:\n  model: resnet50\n  batch: 1\n  hw: h100-sxm\n"
                           "  pool: cnmem\n  swap: none\n  concurrency: serial\n";
  const std::string empty = write_temp("vl1.yaml", base + "vary: []\n");
  CHECK_THROWS_WITH(load_sweep(empty), empty + ":9: 'vary': expected a mapping, or a non-empty list of mappings");
  const std::string scalar = write_temp("vl2.yaml", base + "vary:\n  - {batch: [1]}\n  - batch\n");
  CHECK_THROWS_WITH(load_sweep(scalar), scalar + ":11: 'vary[1]': expected a mapping of keys to lists");
  const std::string key = write_temp("vl3.yaml", base + "vary:\n  - {batch: [1]}\n  - bach: [2]\n");
  CHECK_THROWS_WITH(load_sweep(key), Catch::Contains(key + ":11: 'vary[1].bach': unknown experiment key"));
  const std::string value = write_temp("vl4.yaml", base + "vary:\n  - {batch: [1]}\n  - pool: [cnmem, nope]\n");
  CHECK_THROWS_WITH(load_sweep(value), Catch::Contains(value + ":11: 'pool': unknown pool 'nope'"));
  // The limit counts the sum of the products: 6 + 6 points above a limit of 10, each product below it.
  const std::string twelve = write_temp("vl5.yaml", "max_points: 10\n" + base +
                                                        "vary:\n  - {batch: [1, 2], iterations: [1, 2, 3]}\n"
                                                        "  - {batch: [3, 4], iterations: [1, 2, 3]}\n");
  CHECK_THROWS_WITH(load_sweep(twelve), Catch::Contains("'vary': expands to 12 points, above the limit of 10"));
}

TEST_CASE("a baseline must be a point of the sweep, named by experiment keys") {
  const std::string base = "name: t\nbase:\n  model: resnet50\n  batch: 1\n  hw: h100-sxm\n"
                           "  pool: cnmem\n  swap: none\n  concurrency: serial\n";
  const std::string missing = write_temp("bl1.yaml", base + "vary:\n  pool: [cnmem, cuda-malloc]\nbaseline: {pool: tf-bfc}\n");
  CHECK_THROWS_WITH(load_sweep(missing),
                    missing + ":11: 'baseline': the baseline of resnet50 b1 h100-sxm cnmem none serial would be resnet50 "
                              "b1 h100-sxm tf-bfc none serial, which is no point of the sweep: add it to `vary`, or drop "
                              "`baseline`");
  const std::string key = write_temp("bl2.yaml", base + "vary:\n  pool: [cnmem]\nbaseline:\n  pol: cnmem\n");
  CHECK_THROWS_WITH(load_sweep(key), Catch::Contains(key + ":12: 'baseline.pol': unknown experiment key"));
  const std::string value = write_temp("bl3.yaml", base + "vary:\n  pool: [cnmem]\nbaseline:\n  pool: cnmen\n");
  CHECK_THROWS_WITH(load_sweep(value), Catch::Contains(value + ":12: 'pool': unknown pool 'cnmen'"));
  const std::string scalar = write_temp("bl4.yaml", base + "baseline: cnmem\n");
  CHECK_THROWS_WITH(load_sweep(scalar), Catch::Contains(scalar + ":9: 'baseline': expected a mapping"));
}

TEST_CASE("with a baseline, summary.md gives each run's time and memory as a change from its baseline's") {
  const Sweep s = load_sweep(write_temp("u.yaml", kUnionSweep));
  auto run = [](const Experiment& e) {
    if (e.concurrency.name == "critical-path") throw std::runtime_error("boom");
    ExperimentResult r;
    r.experiment = e;
    r.peak_live_bytes = 1000;
    r.peak_reserved_bytes = e.pool.name == "cnmem" ? 4000 : 2000;
    r.iteration_time_us = e.model == "vgg16" ? 500.0 : e.concurrency.name == "branch-streams" ? 80.0 : 100.0;
    return r;
  };
  std::ostringstream log;
  const fs::path d = absent_sweep_dir("baseline");
  run_sweep(s, quiet_options(d, 2), run, log);
  const auto lines = lines_of(dlsim::testing::read_whole_file(d / "u" / "summary.md"));
  REQUIRE(lines.size() == 12);
  CHECK_THAT(lines[2], Catch::Contains("with `{pool: pytorch-caching, concurrency: serial}` (the baseline)"));
  CHECK_THAT(lines[4], Catch::EndsWith(" time vs baseline | memory vs baseline |"));
  CHECK_THAT(lines[6], Catch::StartsWith("| resnet50 | 2 | h100-sxm | pytorch-caching | none | serial | ok |") &&
                           Catch::EndsWith("| baseline | baseline |"));
  CHECK_THAT(lines[7], Catch::Contains("| cnmem |") && Catch::EndsWith("| +0.0% | +100.0% |"));
  CHECK_THAT(lines[8], Catch::Contains("| vgg16 |") && Catch::EndsWith("| baseline | baseline |"));
  CHECK_THAT(lines[9], Catch::EndsWith("| +0.0% | +100.0% |"));
  CHECK_THAT(lines[10], Catch::Contains("| branch-streams |") && Catch::EndsWith("| -20.0% | +0.0% |"));
  // critical-path failed: an error row, no comparison, the same number of cells.
  CHECK_THAT(lines[11], Catch::Contains("| critical-path | error |"));
  CHECK(std::count(lines[11].begin(), lines[11].end(), '|') == std::count(lines[10].begin(), lines[10].end(), '|'));
}
