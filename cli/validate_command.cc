#include "cli/validate_command.h"

#include <CLI/CLI.hpp>

#include "experiment/experiment.h"
#include "experiment/run_experiment.h"
#include "common/config_error.h"
#include "policies/pool/virtual_device_memory.h"
#include "sim/executor.h"
#include "validate/calibrate/compare.h"

namespace dlsim {

CLI::App* add_validate_command(CLI::App& app, ValidateCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("validate", "run an experiment on a real GPU beside the simulator");
  cmd->add_option("EXPERIMENT", o.experiment_path, "experiment file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", o.out_dir, "output folder")->required();
  cmd->add_option("--warmup", o.warmup, "warm-up iterations")->capture_default_str();
  cmd->add_option("--iterations", o.iterations, "measured iterations")->capture_default_str();
  cmd->add_flag("--microbench", o.microbench, "also run the hardware micro-benchmarks");
  cmd->add_option("--cuda-binary", o.cuda_binary, "dlsim-cuda to run (default: beside dlsim)");
  return cmd;
}

int run_validate_command(const ValidateCommandOptions& o, std::ostream& out, std::ostream& err) {
  if (o.out_dir.empty()) throw ConfigError("<command line>", 0, "--out", "validate needs an output folder");
  if (o.warmup < 0 || o.iterations < 1)
    throw ConfigError("<command line>", 0, "--iterations", "need warmup >= 0 and iterations >= 1");
  Experiment e = load_experiment(o.experiment_path);
  // The harness runs each Adam update op as one fused kernel (validate/gpu/op_translation_elementwise.cc), not as
  // PyTorch's foreach passes: the plan, and its simulated twin, say so (4 reads, 3 writes, no sqrt temporaries).
  e.eager_adam = EagerAdam::PerParameter;
  // Its cross entropy backward is one fused kernel from the log-probabilities (validate/gpu/cuda/kernels.cu's
  // cross_entropy_backward), not nll_loss_backward then _log_softmax_backward_data: no middle gradient tensor.
  e.nll_grad_workspace = false;
  PreparedExperiment prep = prepare_experiment(e);
  // The simulated twin of the real run: the same Program, the same pool, warm-up iterations included, so that
  // iteration i of both traces is the same work.
  VirtualDeviceMemory dev(prep.hw.spec.memory_bytes, prep.hw.spec.total_memory_bytes);
  auto pool = make_pool(e, dev);
  SimContext ctx{prep.graph, prep.hw.spec, *prep.hw.kernels, *prep.hw.link, *pool, dev};
  SimOptions so;
  so.iterations = o.warmup + o.iterations;
  RunResult r = simulate(prep.program, ctx, so);
  number_as_measured(r.trace, o.warmup);  // iteration i of both traces: the i-th measured iteration

  ProgramFile plan;
  plan.experiment = o.experiment_path;
  plan.hw = prep.hw.spec.name;
  plan.capacity_bytes = prep.hw.spec.memory_bytes;
  plan.total_global_mem_bytes = prep.hw.spec.total_memory_bytes;
  plan.pool = e.pool.name;
  plan.pool_params = e.pool.params;
  plan.warmup = o.warmup;
  plan.iterations = o.iterations;
  plan.graph = std::move(prep.graph);
  plan.program = std::move(prep.program);
  return run_validate(o, plan, r.trace, out, err);
}

}  // namespace dlsim
