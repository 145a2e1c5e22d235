#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/sweep.h"
#include "common/config_error.h"

using namespace dlsim;
namespace fs = std::filesystem;

namespace {
std::string write_temp(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / "dlsim_sweep_test";
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
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
  opt.results_dir = (fs::temp_directory_path() / "dlsim_sweep_test" / "results").string();
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
  }, log);
  CHECK(calls == 6);
  CHECK(errors == 1);
  std::string csv = slurp(fs::path(opt.results_dir) / "t" / "runs.csv");
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
