// `dlsim fit` with a layout search: bad flags are errors naming the flag; a search prints every cell, the same
// bytes on every run.
#include "cli/fit_command.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "common/config_error.h"

using namespace dlsim;

namespace {

std::string fit_experiment_file() {
  // One file per process: CTest runs this binary's cases as parallel processes, and a shared name let one case
  // read the file while another rewrote it.
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("dlsim_fit_command_test-" + std::to_string(::getpid()) + ".yaml")).string();
  std::ofstream f(path);
  f << "model: cifar-resnet20\nbatch: 4\nhw: h100-sxm\npool: pytorch-caching\nswap: none\nconcurrency: serial\n"
       "iterations: 2\noptimizer: adamw\n";
  return path;
}

FitCommandOptions search_options() {
  FitCommandOptions o;
  o.experiment = fit_experiment_file();
  o.layouts_given = true;
  o.layouts = {"dp", "fsdp"};
  o.gpus_given = true;
  o.gpus = "1,4";
  o.no_max_batch = true;
  return o;
}

std::string fit_error(const FitCommandOptions& o) {
  std::ostringstream s;
  try {
    run_fit_command(o, s, s);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("fit --layouts/--gpus: bad input is an error naming the flag") {
  FitCommandOptions o = search_options();
  o.layouts = {"dp", "ddp"};
  CHECK_THAT(fit_error(o), Catch::Contains("--layouts") && Catch::Contains("unknown layout 'ddp'"));
  o.layouts = {};  // --layouts ""
  CHECK_THAT(fit_error(o), Catch::Contains("--layouts") && Catch::Contains("names no layout"));
  o = search_options();
  o.gpus = "0,8";
  CHECK_THAT(fit_error(o), Catch::Contains("--gpus") && Catch::Contains("got 0"));
  o.gpus = "8,2000000";
  CHECK_THAT(fit_error(o), Catch::Contains("--gpus") && Catch::Contains("between 1 and 1048576"));
  o.gpus = "8,x";
  CHECK_THAT(fit_error(o), Catch::Contains("--gpus") && Catch::Contains("'x'"));
  o.gpus = "";
  CHECK_THAT(fit_error(o), Catch::Contains("--gpus") && Catch::Contains("no GPU count"));
  o = search_options();
  o.gpus_given = false;
  CHECK_THAT(fit_error(o), Catch::Contains("--gpus") && Catch::Contains("needs the GPU counts"));
  o.max_gpus_given = true;
  o.max_gpus = 0;
  CHECK_THAT(fit_error(o), Catch::Contains("--max-gpus") && Catch::Contains("got 0"));
  o.gpus_given = true;
  o.max_gpus = 8;
  CHECK_THAT(fit_error(o), Catch::Contains("--max-gpus") && Catch::Contains("not both"));
  o = search_options();
  o.overheads_percent = {5};
  CHECK_THAT(fit_error(o), Catch::Contains("--memory-at-overhead"));
  FitCommandOptions plain;
  plain.experiment = fit_experiment_file();
  plain.no_max_batch = true;
  CHECK_THAT(fit_error(plain), Catch::Contains("--no-max-batch"));
}

TEST_CASE("fit --gpus: every cell in the table and the JSON, byte-identical reruns") {
  FitCommandOptions o = search_options();
  std::ostringstream a, b;
  CHECK(run_fit_command(o, a, a) == 0);
  CHECK(run_fit_command(o, b, b) == 0);
  CHECK(a.str() == b.str());
  CHECK_THAT(a.str(), Catch::Contains("fewest GPUs       1 (dp)"));  // a tie on one GPU (the plain run): the first listed
  o.json = true;
  std::ostringstream js;
  CHECK(run_fit_command(o, js, js) == 0);
  const auto j = nlohmann::json::parse(js.str());
  CHECK(j["cells"].size() == 4);
  CHECK(j["smallest_gpus"]["fsdp"] == 1);
  CHECK(j["gpus"] == nlohmann::json::array({1, 4}));
}

TEST_CASE("fit --layouts fsdp+tp2: a count tp does not divide is skipped, not an error, and the batch line says so") {
  const std::string cfg = (std::filesystem::temp_directory_path() /
                           ("dlsim_fit_command_test_llama-" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(cfg) << R"({"model_type": "llama", "hidden_act": "silu", "vocab_size": 1000, "hidden_size": 256,
    "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 4,
    "max_position_embeddings": 1024})";
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("dlsim_fit_command_test_tp-" + std::to_string(::getpid()) + ".yaml")).string();
  std::ofstream(path) << "model: " << cfg << "\nbatch: 1\nseq_len: 64\nhw: h100-sxm\npool: pytorch-caching\n"
                      << "swap: none\nconcurrency: serial\niterations: 2\noptimizer: adamw\n";
  FitCommandOptions o = search_options();
  o.experiment = path;
  o.layouts = {"fsdp", "fsdp+tp2"};
  o.gpus = "1,2";
  std::ostringstream out;
  CHECK(run_fit_command(o, out, out) == 0);
  CHECK_THAT(out.str(), Catch::Contains("fsdp+tp2         1  skipped") && Catch::Contains("runs T times it"));
  o.json = true;
  std::ostringstream js;
  CHECK(run_fit_command(o, js, js) == 0);
  const auto j = nlohmann::json::parse(js.str());
  CHECK(j["tp"] == nlohmann::json::array({1, 2}));
  CHECK(j["cells"][2]["status"] == "skipped");
  CHECK(j["cells"][3]["status"] == "fits");
  std::filesystem::remove(cfg);
  std::filesystem::remove(path);
}
