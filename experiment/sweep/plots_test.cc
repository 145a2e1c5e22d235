#include "experiment/sweep/plots.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiment/sweep/sweep.h"
#include "common/config_error.h"

using namespace dlsim;

namespace {

std::vector<SweepPlot> parse(const std::string& yaml) { return sweep_plots_from_yaml(YAML::Load(yaml), "s.yaml"); }

std::string error_of(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("plots: parses each figure's keys into the options dlsim plot takes") {
  const auto plots = parse(
      "- {name: mem, x: model, y: peak_reserved_bytes, hue: pool, bound: peak_live_bytes, kind: bars, log_y: true,\n"
      "   where: [swap=none], caption: Peak memory.}\n"
      "- {name: fast, x: model, y: iteration_time_us, hue: pool, kind: speedup, baseline: cuda-malloc}\n");
  REQUIRE(plots.size() == 2);
  CHECK(plots[0].name == "mem");
  CHECK(plots[0].caption == "Peak memory.");
  CHECK(plots[0].options.bound == "peak_live_bytes");
  CHECK(plots[0].options.log_y);
  CHECK(plots[0].options.where == std::vector<std::string>{"swap=none"});
  CHECK(plots[1].options.kind == "speedup");
  FigureSpec o = plots[1].options;
  o.csv = "runs.csv";
  o.out = {"a.png"};
  CHECK(plot_script_args(o) == std::vector<std::string>{"runs.csv", "--x=model", "--y=iteration_time_us",
                                                        "--kind=speedup", "--hue=pool", "--baseline=cuda-malloc",
                                                        "--out=a.png"});
  // Text the user gave never reaches the script as an option: a CSV named "-x.csv", a title or an output name
  // starting with '-'.
  o.csv = "-x.csv";
  o.title = "--help";
  o.out = {"-a.png"};
  const std::vector<std::string> a = plot_script_args(o);
  CHECK(a.front() == "./-x.csv");
  CHECK(std::find(a.begin(), a.end(), "--title=--help") != a.end());
  CHECK(std::find(a.begin(), a.end(), "--out=-a.png") != a.end());
  CHECK(std::find(a.begin(), a.end(), "--help") == a.end());
}

TEST_CASE("plots: mistakes name the file, line and key, and a missing column lists the columns") {
  CHECK_THAT(error_of("- {name: a, x: model, y: peak_bytes}"),
             Catch::Contains("s.yaml:1: 'plots[0].y': runs.csv has no column 'peak_bytes'; its columns: model, batch, "
                             "hw, pool"));
  CHECK_THAT(error_of("- {name: a, x: model, y: iteration_time_us, kind: pie}"),
             Catch::Contains("'plots[0].kind': unknown kind 'pie'; valid: auto, bars, lines, pareto, speedup"));
  CHECK_THAT(error_of("- {name: a/b, x: model, y: iteration_time_us}"), Catch::Contains("must be a plain file name"));
  CHECK_THAT(error_of("- {name: a, x: model, y: iteration_time_us}\n- {name: a, x: model, y: events}"),
             Catch::Contains("s.yaml:2: 'plots[1].name': 'a' names two figures"));
  CHECK_THAT(error_of("- {name: a, x: model, y: iteration_time_us, kind: speedup, hue: pool}"),
             Catch::Contains("needs `hue` and `baseline`"));
  CHECK_THAT(error_of("- {name: a, x: model, y: iteration_time_us, where: [nope=1]}"),
             Catch::Contains("'plots[0].where': runs.csv has no column 'nope'"));
  CHECK_THAT(error_of("- {name: a, x: model, y: iteration_time_us, colour: red}"), Catch::Contains("colour"));
  CHECK_THAT(error_of("[]"), Catch::Contains("expected a non-empty list"));
}

TEST_CASE("plots: a sweep draws its figures beside summary.md and links them (python3-matplotlib)") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "dlsim-sweep-plots-test";
  fs::remove_all(dir);
  const Sweep s = sweep_from_yaml(YAML::Load("name: tiny\n"
                                             "base: {model: cifar-resnet20, batch: 8, hw: h100-sxm, pool: cnmem, swap: none,"
                                             " concurrency: serial, iterations: 2}\n"
                                             "vary: {pool: [cuda-malloc, cnmem]}\n"
                                             "plots:\n"
                                             "  - {name: mem, x: model, y: peak_reserved_bytes, hue: pool, bound: peak_live_bytes,"
                                             " caption: The caption.}\n"),
                                  "tiny.yaml");
  REQUIRE(s.plots.size() == 1);
  SweepOptions opt;
  opt.results_dir = dir.string();
  opt.quiet = true;
  std::ostringstream log;
  run_sweep(s, opt, [](const Experiment& e) { return run_experiment(e); }, log);
  CHECK(fs::file_size(dir / "tiny" / "runs.csv") > 100);
  for (const char* f : {"mem.png", "mem.svg"}) {
    CAPTURE(f);
    CHECK(fs::file_size(dir / "tiny" / f) > 5000);
  }
  std::ifstream md(dir / "tiny" / "summary.md");
  const std::string summary((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  CHECK_THAT(summary, Catch::Contains("## Figures\n\n![mem](mem.png)\n\nThe caption. [mem.png](mem.png), [mem.svg](mem.svg)\n"));
  fs::remove_all(dir);
}
