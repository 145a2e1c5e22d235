// dlsim: one binary, subcommands. YAML in, tables and JSON out. Errors in the user's input print where they
// are (file, line, key) and exit 2; an out-of-memory result of `run` exits 3.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "common/config_error.h"

int main(int argc, char** argv) {
  using namespace dlsim;
  CLI::App app{"dlsim: a discrete-event simulator of deep-learning training on GPUs (memory pools, swapping, "
               "stream concurrency)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dlsim 0.1.0");

  RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "simulate one experiment (YAML)");
  run_cmd->add_option("EXPERIMENT", run.experiment, "experiment file")->required()->check(CLI::ExistingFile);
  run_cmd->add_flag("--json", run.json, "print one JSON object");
  run_cmd->add_option("--chrome-trace", run.chrome_trace, "write a Chrome/Perfetto trace of the run");

  ModelOptionsCli model;
  auto* model_cmd = app.add_subcommand("model", "describe a model: parameters, MACs, activation memory");
  model_cmd->add_option("NAME", model.model, "zoo name or .onnx file");
  model_cmd->add_option("--batch", model.batch, "batch size")->capture_default_str();
  model_cmd->add_option("--image-size", model.image_size, "image side (0: the model's default)");
  model_cmd->add_option("--seq-len", model.seq_len, "sequence length (0: the model's default)");
  model_cmd->add_option("--optimizer", model.optimizer, "sgd-momentum or adam")->capture_default_str();
  model_cmd->add_option("--precision", model.precision, "fp32 or mixed-bf16")->capture_default_str();
  model_cmd->add_flag("--json", model.json, "print one JSON object");
  model_cmd->add_flag("--list", model.list, "list the model zoo");

  auto* list_cmd = app.add_subcommand("list", "every model, hardware file and policy with its parameters");

  SweepOptionsCli sweep;
  auto* sweep_cmd = app.add_subcommand("sweep", "run the cartesian product of a sweep file");
  sweep_cmd->add_option("SWEEP", sweep.sweep, "sweep file")->required()->check(CLI::ExistingFile);
  sweep_cmd->add_option("--results-dir", sweep.results_dir, "where results/<name>/ goes")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  try {
    if (*run_cmd) return cmd_run(run, std::cout);
    if (*model_cmd) return cmd_model(model, std::cout);
    if (*list_cmd) return cmd_list(std::cout);
    if (*sweep_cmd) return cmd_sweep(sweep, std::cout);
  } catch (const ConfigError& e) {
    std::cerr << "dlsim: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dlsim: internal error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
