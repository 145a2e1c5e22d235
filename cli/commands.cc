#include "cli/commands.h"

#include <fstream>
#include <iomanip>
#include <ostream>

#include "cli/experiment.h"
#include "cli/run_experiment.h"
#include "cli/sweep.h"
#include "common/config_error.h"
#include "hw/cost_model.h"
#include "hw/gpu_spec.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/planners/planner.h"
#include "policies/pool/pool_policy.h"
#include "policies/swap/swap_policy.h"
#include "policies/pool/virtual_device_memory.h"
#include "sim/executor.h"
#include "validate/commands.h"
#include "workloads/zoo.h"

namespace dlsim {

namespace {

std::string mib(uint64_t b) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(1) << static_cast<double>(b) / (1024.0 * 1024.0) << " MiB";
  return o.str();
}

template <class Reg>
void list_registry(const Reg& reg, const std::string& title, std::ostream& out) {
  out << title << ":\n";
  for (const auto& e : reg.entries()) {
    out << "  " << std::left << std::setw(18) << e.name << e.description << '\n';
    for (const auto& p : e.params) {
      out << "      " << p.name << " (" << to_string(p.type) << ", default " << to_string(p.default_value);
      if (!p.check.accepts_any()) out << ", valid: " << p.check.text();
      out << "): " << p.description << '\n';
    }
  }
}

}  // namespace

int cmd_run(const RunOptions& o, std::ostream& out) {
  Experiment e = load_experiment(o.experiment);
  RunArtifacts artifacts;
  ExperimentResult r = run_experiment(e, o.chrome_trace.empty() ? nullptr : &artifacts);
  if (!o.chrome_trace.empty()) {
    std::ofstream f(o.chrome_trace);
    if (!f) throw ConfigError(o.chrome_trace, 0, "--chrome-trace", "cannot write");
    f << to_chrome_trace(artifacts.trace, artifacts.graph).dump() << '\n';
  }
  if (o.json) {
    out << to_json(r).dump(2) << '\n';
  } else {
    out << "experiment        " << o.experiment << '\n'
        << "model             " << e.model << " (batch " << e.batch << ", " << r.ops << " ops, " << r.tensors
        << " tensors)\n"
        << "hardware          " << e.hw << ", kernel model " << r.kernel_model;
    if (r.kernel_report.contains("measured_ops"))
      out << " (" << r.kernel_report["measured_ops"] << " of " << r.kernel_report["ops"] << " ops measured)";
    out << '\n'
        << "policies          pool " << e.pool.label() << ", swap " << e.swap.label() << ", concurrency "
        << e.concurrency.label() << '\n';
    if (r.oom) out << "OUT OF MEMORY     " << r.oom_where << '\n';
    out << std::fixed << std::setprecision(3)
        << "iteration time    " << r.iteration_time_us / 1000.0 << " ms (steady state, " << r.iterations_run
        << " iterations run; first " << r.first_iteration_time_us / 1000.0 << " ms)\n"
        << "peak live         " << mib(r.peak_live_bytes) << "  (lower bound for any pool)\n"
        << "peak reserved     " << mib(r.peak_reserved_bytes) << "  (fragmentation " << std::setprecision(1)
        << r.fragmentation() * 100.0 << "%)\n"
        << "cudaMalloc calls  " << r.device_mallocs << ", cudaFree calls " << r.device_frees << '\n'
        << "allocator time    " << std::setprecision(1) << r.alloc_time_us << " us in the steady-state iteration\n"
        << "simulation        " << r.events << " events in " << std::setprecision(1) << r.sim_wall_ms << " ms\n";
  }
  return r.oom ? 3 : 0;
}

int cmd_model(const ModelOptionsCli& o, std::ostream& out) {
  if (o.list) {
    for (const auto& m : model_zoo()) out << std::left << std::setw(16) << m.name << m.description << '\n';
    return 0;
  }
  if (o.model.empty()) throw ConfigError("<command line>", 0, "NAME", "give a model name or an .onnx file (dlsim model --list)");
  if (o.batch <= 0) throw ConfigError("<command line>", 0, "--batch", "must be a positive integer");
  ModelOptions mo;
  mo.batch = o.batch;
  mo.image_size = o.image_size;
  mo.seq_len = o.seq_len;
  if (o.optimizer == "adam") mo.training.optimizer = Optimizer::Adam;
  else if (o.optimizer != "sgd-momentum") throw ConfigError("<command line>", 0, "--optimizer", "valid: sgd-momentum, adam");
  if (o.precision == "mixed-bf16") mo.training.precision = Precision::MixedBF16;
  else if (o.precision != "fp32") throw ConfigError("<command line>", 0, "--precision", "valid: fp32, mixed-bf16");
  Graph fwd = build_forward_graph(o.model, mo);
  Graph train = make_training_graph(fwd, mo.training);
  ModelSummary s = summarize(fwd, train);
  if (o.json) {
    nlohmann::json j = {{"model", o.model},
                        {"batch", o.batch},
                        {"params", s.params},
                        {"fwd_macs", s.fwd_macs},
                        {"saved_for_backward_bytes", s.saved_for_backward_bytes},
                        {"ops", s.ops},
                        {"tensors", s.tensors}};
    out << j.dump(2) << '\n';
  } else {
    out << "model                     " << o.model << " (batch " << o.batch << ")\n"
        << "parameters                " << s.params << '\n'
        << "forward MACs              " << std::fixed << std::setprecision(0) << s.fwd_macs << " ("
        << std::setprecision(2) << s.fwd_macs / 1e9 << " G)\n"
        << "saved for backward        " << s.saved_for_backward_bytes << " bytes (" << mib(s.saved_for_backward_bytes)
        << ")\n"
        << "training graph            " << s.ops << " ops, " << s.tensors << " tensors\n";
  }
  return 0;
}

int cmd_list(std::ostream& out) {
  out << "models:\n";
  for (const auto& m : model_zoo()) out << "  " << std::left << std::setw(18) << m.name << m.description << '\n';
  out << "  (or any .onnx file)\n";
  out << "hardware (configs/hw):\n";
  for (const auto& h : list_hw_names()) {
    GpuSpec g = load_gpu_spec(resolve_hw_path(h));
    out << "  " << std::left << std::setw(18) << h << g.description << '\n';
  }
  list_registry(pool_registry(), "pools", out);
  list_registry(planner_registry(), "offline planners (dlsim plan, and the planned pool's `planner`)", out);
  list_registry(swap_registry(), "swap policies", out);
  list_registry(concurrency_registry(), "concurrency policies", out);
  list_registry(kernel_model_registry(), "kernel cost models (hardware file: kernel_model, parameters under roofline)", out);
  return 0;
}

int cmd_sweep(const SweepOptionsCli& o, std::ostream& out) {
  Sweep s = load_sweep(o.sweep);
  SweepOptions opt;
  opt.results_dir = o.results_dir;
  int errors = run_sweep(s, opt, [](const Experiment& e) { return run_experiment(e); }, out);
  return errors ? 1 : 0;
}

int cmd_validate(const ValidateCli& o, std::ostream& out, std::ostream& err) {
  if (o.out_dir.empty()) throw ConfigError("<command line>", 0, "--out", "validate needs an output folder");
  if (o.warmup < 0 || o.iterations < 1)
    throw ConfigError("<command line>", 0, "--iterations", "need warmup >= 0 and iterations >= 1");
  Experiment e = load_experiment(o.experiment);
  PreparedExperiment prep = prepare_experiment(e);
  // The simulated twin of the real run: the same Program, the same pool, warm-up iterations included, so that
  // iteration i of both traces is the same work.
  VirtualDeviceMemory dev(prep.hw.spec.memory_bytes);
  auto pool = make_pool(e, dev);
  SimContext ctx{prep.graph, prep.hw.spec, *prep.hw.kernels, *prep.hw.link, *pool, dev};
  SimOptions so;
  so.iterations = o.warmup + o.iterations;
  RunResult r = simulate(prep.program, ctx, so);

  PlanFile plan;
  plan.experiment = o.experiment;
  plan.hw = prep.hw.spec.name;
  plan.capacity_bytes = prep.hw.spec.memory_bytes;
  plan.pool = e.pool.name;
  plan.pool_params = e.pool.params;
  plan.warmup = o.warmup;
  plan.iterations = o.iterations;
  plan.graph = std::move(prep.graph);
  plan.program = std::move(prep.program);

  ValidateOptions vo;
  vo.experiment_path = o.experiment;
  vo.out_dir = o.out_dir;
  vo.warmup = o.warmup;
  vo.iterations = o.iterations;
  vo.microbench = o.microbench;
  vo.cuda_binary = o.cuda_binary;
  return run_validate(vo, plan, r.trace, out, err);
}

}  // namespace dlsim
