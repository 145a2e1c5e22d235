// dlsim: one binary, subcommands. YAML in, tables and JSON out. Errors in the user's input print where they
// are (file, line, key) and exit 2; an out-of-memory result of `run` exits 3.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "common/config_error.h"
#include "policies/planners/plan_command.h"
#include "validate/commands.h"

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

  PlanCommandOptions plan;
  std::vector<std::string> plan_params;
  double plan_time_limit = -1;
  std::string plan_out;
  auto* plan_cmd = app.add_subcommand("plan", "place buffers of known lifetimes (CSV id,lower,upper,size)");
  plan_cmd->add_option("INSTANCE", plan.instance_path, "instance CSV")->required();
  plan_cmd->add_option("--planner", plan.planner, "greedy-by-size, best-fit or optimal")->capture_default_str();
  plan_cmd->add_option("--param", plan_params, "planner parameter KEY=VALUE (repeatable)");
  plan_cmd->add_option("--out", plan_out, "write the solution CSV (the rows with offset)");
  plan_cmd->add_option("--time-limit", plan_time_limit, "seconds, for planners that search (optimal)");
  plan_cmd->add_flag("--json", plan.json, "print one JSON object");

  ValidateCli validate;
  auto* validate_cmd = app.add_subcommand("validate", "run an experiment on a real GPU beside the simulator");
  validate_cmd->add_option("EXPERIMENT", validate.experiment, "experiment file")->required()->check(CLI::ExistingFile);
  validate_cmd->add_option("--out", validate.out_dir, "output folder")->required();
  validate_cmd->add_option("--warmup", validate.warmup, "warm-up iterations")->capture_default_str();
  validate_cmd->add_option("--iterations", validate.iterations, "measured iterations")->capture_default_str();
  validate_cmd->add_flag("--microbench", validate.microbench, "also run the hardware micro-benchmarks");
  validate_cmd->add_option("--cuda-binary", validate.cuda_binary, "dlsim-cuda to run (default: beside dlsim)");

  std::vector<std::string> calib_dirs;
  std::string calib_hw, calib_out;
  auto* calibrate_cmd = app.add_subcommand("calibrate", "fit the hardware model to validate runs");
  calibrate_cmd->add_option("DIR", calib_dirs, "validate output folders")->required()->check(CLI::ExistingDirectory);
  calibrate_cmd->add_option("--hw", calib_hw, "hardware file to start from")->required()->check(CLI::ExistingFile);
  calibrate_cmd->add_option("--out", calib_out, "calibrated hardware file to write")->required();

  std::string cmp_sim, cmp_real, cmp_plan;
  auto* compare_cmd = app.add_subcommand("compare", "error tables: simulated trace against a measured one");
  compare_cmd->add_option("SIM_TRACE", cmp_sim, "trace.sim.json")->required()->check(CLI::ExistingFile);
  compare_cmd->add_option("REAL_TRACE", cmp_real, "trace.cuda.json")->required()->check(CLI::ExistingFile);
  compare_cmd->add_option("--plan", cmp_plan, "plan.json of the run (op names)")->required()->check(CLI::ExistingFile);
  bool cmp_json = false;
  compare_cmd->add_flag("--json", cmp_json, "print the whole comparison (every op, per-kind sums) as one JSON object");

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
    if (*plan_cmd) {
      for (const std::string& kv : plan_params) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0)
          throw ConfigError("<command line>", 0, "--param", "expected KEY=VALUE, got '" + kv + "'");
        plan.planner_params.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
      }
      if (!plan_out.empty()) plan.out_path = plan_out;
      if (plan_time_limit >= 0) plan.time_limit_s = plan_time_limit;
      return run_plan_command(plan, std::cout);
    }
    if (*validate_cmd) return cmd_validate(validate, std::cout, std::cerr);
    if (*calibrate_cmd) return run_calibrate(calib_dirs, calib_hw, calib_out, std::cout);
    if (*compare_cmd) return run_compare(cmp_sim, cmp_real, cmp_plan, std::cout, cmp_json);
  } catch (const ConfigError& e) {
    std::cerr << "dlsim: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dlsim: internal error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
