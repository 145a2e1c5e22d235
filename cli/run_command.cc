#include "cli/run_command.h"

#include <CLI/CLI.hpp>

#include <ostream>

#include "common/atomic_file.h"
#include "experiment/experiment.h"
#include "experiment/snapshot/memory_snapshot.h"
#include "experiment/run_experiment.h"
#include "common/config_error.h"
#include "common/strings.h"

namespace dlsim {

CLI::App* add_run_command(CLI::App& app, RunCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("run", "simulate one experiment (YAML)");
  cmd->add_option("EXPERIMENT", o.experiment, "experiment file")->required()->check(CLI::ExistingFile);
  cmd->add_flag("--json", o.json, "print one JSON object");
  cmd->add_option("--chrome-trace", o.chrome_trace, "write a Chrome/Perfetto trace of the run");
  cmd->add_option("--memory-snapshot", o.memory_snapshot,
                  "write the run's allocation history as a PyTorch memory snapshot (pickle; pytorch.org/memory_viz)");
  return cmd;
}

int run_run_command(const RunCommandOptions& o, std::ostream& out, std::ostream& err) {
  Experiment e = load_experiment(o.experiment);
  RunArtifacts artifacts;
  const bool want_artifacts = !o.chrome_trace.empty() || !o.memory_snapshot.empty();
  ExperimentResult r = run_experiment(e, want_artifacts ? &artifacts : nullptr);
  for (const std::string& w : r.warnings) err << "dlsim: warning: " << w << '\n';
  if (!o.chrome_trace.empty()) {
    write_file_atomically(o.chrome_trace, to_chrome_trace(artifacts.trace, artifacts.graph).dump() + "\n",
                          "--chrome-trace");
  }
  if (!o.memory_snapshot.empty()) write_memory_snapshot(o.memory_snapshot, artifacts, artifacts.iterations);
  if (o.json) {
    out << to_json(r).dump(2) << '\n';
    return r.oom ? 3 : 0;
  }
  out << "experiment        " << o.experiment << '\n'
      << "model             " << e.model << " (batch " << e.batch << ", " << r.ops << " ops, " << r.tensors
      << " tensors)\n"
      << "hardware          " << e.hw_label() << ", kernel model " << r.kernel_model;
  if (r.kernel_report.contains("fitted_ops"))
    out << " (" << r.kernel_report["fitted_ops"] << " of " << r.kernel_report["ops"] << " ops by a fitted class, "
        << r.kernel_report["measured_ops"] << " measured)";
  else if (r.kernel_report.contains("measured_ops"))
    out << " (" << r.kernel_report["measured_ops"] << " of " << r.kernel_report["ops"] << " ops measured)";
  out << '\n'
      << "policies          pool " << e.pool.label() << ", swap " << e.swap.label() << ", concurrency "
      << e.concurrency.label() << '\n';
  if (r.oom) out << "OUT OF MEMORY     " << r.oom_where << '\n';
  out << "iteration time    " << fixed(r.iteration_time_us / 1000.0, 3) << " ms (steady state, " << r.iterations_run
      << " iterations run; first " << fixed(r.first_iteration_time_us / 1000.0, 3) << " ms)\n"
      << "bound             " << (r.host_bound() ? "host" : "device") << ": host " << fixed(r.host_time_us / 1000.0, 3)
      << " ms, " << (r.host_worker_time_us > 0 ? "CPU step " + fixed(r.host_worker_time_us / 1000.0, 3) + " ms, " : "")
      << "device " << fixed(r.device_time_us / 1000.0, 3) << " ms busy per iteration ("
      << (r.host_bound() ? "the GPU waits for the host: docs/host.md says what helps" : "the host keeps ahead of the GPU")
      << ")\n"
      << "peak live         " << mib(r.peak_live_bytes) << " MiB  (lower bound for any pool)\n"
      << "peak reserved     " << mib(r.peak_reserved_bytes) << " MiB  ("
      << (r.reserved_up_front()
              ? "reserved up front by the pool's configuration, " + mib(r.up_front_reserved_bytes) +
                    " MiB: not fragmentation"
              : "fragmentation " + fixed(r.fragmentation() * 100.0, 1) + "%")
      << ")\n"
      << "cudaMalloc calls  " << r.device_mallocs << ", cudaFree calls " << r.device_frees << '\n'
      << "allocator time    " << fixed(r.alloc_time_us, 1) << " us in the steady-state iteration\n"
      ;
  if (!r.swap.empty()) {
    const auto& w = r.swap;
    out << "swap              " << mib(w["swap_out_bytes"].get<uint64_t>()) << " MiB out, "
        << mib(w["swap_in_bytes"].get<uint64_t>()) << " MiB in, " << w["swap_transfers"] << " copies per iteration; "
        << mib(w["pinned_host_bytes"].get<uint64_t>()) << " MiB pinned on the host\n"
        ;
    if (w.contains("stall_us"))
      out << "swap cost         stall " << fixed(w["stall_us"].get<double>() / 1000.0, 3) << " ms ("
          << (w.contains("overhead") ? fixed(w["overhead"].get<double>() * 100.0, 1) + "%" : std::string("n/a")) << " of " << fixed(w["no_swap_iteration_time_us"].get<double>() / 1000.0, 3)
          << " ms without swapping), copy engines busy " << fixed(w["copy_d2h_busy"].get<double>() * 100.0, 1) << "% D2H, "
          << fixed(w["copy_h2d_busy"].get<double>() * 100.0, 1) << "% H2D\n";
    if (w["swap_target_bytes"].get<uint64_t>() > 0)
      out << "swap target       " << mib(w["swap_target_bytes"].get<uint64_t>()) << " MiB of live bytes: "
          << (w["swap_limit_met"].get<bool>() ? std::string("met") : "missed by " + mib(w["swap_limit_miss_bytes"].get<uint64_t>()) + " MiB")
          << '\n';
    if (w["recomputed_launches"].get<uint64_t>() > 0)
      out << "recompute         " << mib(w["dropped_bytes"].get<uint64_t>()) << " MiB dropped, " << w["recomputed_launches"]
          << " launches re-run taking " << fixed(w["recompute_us"].get<double>() / 1000.0, 3) << " ms of device time\n";
    if (w.contains("host_step_us"))
      out << "host step         " << fixed(w["host_step_us"].get<double>() / 1000.0, 3) << " ms of CPU optimizer time; "
          << mib(w["host_optimizer_bytes"].get<uint64_t>()) << " MiB of fp32 optimizer state in host memory\n";
    const bool copies_only = w["recomputed_launches"].get<uint64_t>() == 0 && !w.contains("host_step_us");
    if (!copies_only)
      out << "lower bound       none: the plan " << (w.contains("host_step_us") ? "runs the optimizer on the CPU" : "recomputes")
          << " (the bound holds for plans that only copy)\n";
    else if (!w["swap_bound_reachable"].get<bool>())
      out << "lower bound       none: no plan reaches that memory (the ops alone need "
          << mib(w["swap_least_reachable_bytes"].get<uint64_t>()) << " MiB)\n";
    else if (!w["swap_limit_met"].get<bool>())
      out << "lower bound       none for this run: it missed its target (the bound holds for runs that keep to it)\n";
    else if (w.contains("swap_lower_bound_us"))
      out << "lower bound       " << fixed(w["swap_lower_bound_us"].get<double>() / 1000.0, 3) << " ms for any plan at that memory"
          << (w.contains("swap_gap_to_bound") ? " (gap " + fixed(w["swap_gap_to_bound"].get<double>() * 100.0, 1) + "%)" : "")
          << "\n";
  }
  out << "simulation        " << r.events << " events in " << fixed(r.sim_wall_ms, 1) << " ms\n";
  return r.oom ? 3 : 0;
}

}  // namespace dlsim
