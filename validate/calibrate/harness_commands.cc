#include "validate/calibrate/harness_commands.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "common/atomic_file.h"
#include "common/child_process.h"
#include "common/config_error.h"
#include "common/strings.h"
#include "common/yaml_reader.h"
#include "hw/hardware_base.h"
#include "hw/gpu_spec_file.h"
#include "hw/hardware.h"
#include "validate/calibrate/calibrate.h"
#include "validate/calibrate/compare.h"
#include "validate/calibrate/trace_checks.h"
#include "validate/gpu/microbench_records.h"

namespace dlsim {

namespace fs = std::filesystem;

namespace {

constexpr int kExitNoGpu = 3;  // as dlsim-cuda

std::string find_cuda_binary(const ValidateOptions& o) {
  if (!o.cuda_binary.empty()) return o.cuda_binary;
  if (const char* env = std::getenv("DLSIM_CUDA"); env && *env) return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "dlsim-cuda" : (self.parent_path() / "dlsim-cuda").string();
}

// What calibrate is about to write, read back as dlsim reads a hardware file: a fit that the loader would refuse
// (a factor or rate rounded to 0, from measurements no GPU gives) is an error now, naming the field, and no
// file is written.
void check_calibrated_hardware(const std::string& text, const std::string& out_path,
                               const std::vector<std::string>& dirs) {
  try {
    hardware_from_yaml(parse_yaml_text(text, out_path), out_path);
  } catch (const ConfigError& e) {
    throw ConfigError(out_path, 0, e.key(),
                      "the calibrated hardware file would not load (" + e.message() + "): the measurements in " +
                          join(dirs) + " fit values no hardware file accepts; nothing was written");
  }
}

// Runs dlsim-cuda with these arguments (no shell: the paths reach it as they are) and returns its exit status;
// when it could not be started or a signal killed it, says so and returns 1 (a run that failed).
int run_cuda(const std::vector<std::string>& argv, std::ostream& err) {
  const ChildExit r = run_child(argv);
  if (!r.start_error.empty()) {
    err << "dlsim validate: " << r.start_error << "\n";
    return 1;
  }
  if (r.signal != 0) {
    err << "dlsim validate: " << argv[0] << " " << argv[1] << " was killed by signal " << r.signal << "\n";
    return 1;
  }
  return r.exit_code;
}

}  // namespace

int run_validate(const ValidateOptions& o, const ProgramFile& plan_in, const Trace& sim_trace, std::ostream& out,
                 std::ostream& err) {
  fs::create_directories(o.out_dir);
  ProgramFile plan = plan_in;
  plan.warmup = o.warmup;
  plan.iterations = o.iterations;
  if (plan.experiment.empty()) plan.experiment = o.experiment_path;
  const std::string dir = fs::path(o.out_dir).string();
  write_program_file(plan, dir + "/plan.json");
  Trace sim = sim_trace;
  sim.program_hash = program_fingerprint(plan);  // what dlsim-cuda writes into its trace of the same plan
  write_trace_file(sim, dir + "/trace.sim.json");
  const std::string bin = find_cuda_binary(o);
  if (!fs::exists(bin)) {
    err << "dlsim validate: no CUDA GPU backend: '" << bin << "' does not exist (dlsim-cuda is built only when the "
        << "CUDA Toolkit and cuDNN are found); the plan and the simulated trace are in " << dir << "\n";
    return kExitNoGpu;
  }
  if (o.microbench) {
    const int rc = run_cuda({bin, "microbench", "--out", dir + "/micro.json"}, err);
    if (rc != 0) return rc;
  }
  const int rc = run_cuda({bin, "run", dir + "/plan.json", "--out", dir + "/trace.cuda.json", "--report",
                           dir + "/report.cuda.json"}, err);
  if (rc == kExitNoGpu) {
    err << "dlsim validate: no CUDA GPU on this machine; the plan and the simulated trace are in " << dir << "\n";
    return rc;
  }
  if (rc != 0 && rc != 4) return rc;  // 4: the real run ran out of memory; its trace says where, compare anyway
  const std::string real_path = dir + "/trace.cuda.json";
  const Trace real = read_trace_file(real_path);
  check_trace_times(real, real_path, true);
  check_trace_of_plan(real, real_path, plan, dir + "/plan.json", err);
  print_comparison(compare_traces(sim, real, plan.graph), out);
  return 0;
}

int run_calibrate(const std::vector<std::string>& dirs, const std::string& hw_path, const std::string& out_path,
                  std::ostream& out, bool class_model_only) {
  if (dirs.empty()) throw ConfigError("command line", 0, "DIR", "calibrate needs at least one validate directory");
  std::vector<ProgramFile> plans;
  std::vector<Trace> traces;
  std::vector<nlohmann::json> reports;
  plans.reserve(dirs.size());
  traces.reserve(dirs.size());
  std::optional<MicrobenchFit> micro;
  std::optional<MicrobenchResults> micro_records;
  std::string micro_file;
  for (const std::string& d : dirs) {
    plans.push_back(read_program_file(d + "/plan.json"));
    traces.push_back(read_trace_file(d + "/trace.cuda.json"));
    // Every duration is fitted: one that is 0 or negative would give a factor or a time the hardware file refuses.
    check_trace_times(traces.back(), d + "/trace.cuda.json", true);
    check_trace_of_plan(traces.back(), d + "/trace.cuda.json", plans.back(), d + "/plan.json", out);
    const std::string m = d + "/micro.json";
    if (!micro && fs::exists(m)) {
      micro_records = read_microbench_file(m);
      micro_file = m;
      micro = fit_microbench(*micro_records, m);
    }
    const std::string r = d + "/report.cuda.json";
    if (fs::exists(r)) {
      std::ifstream in(r);
      try {
        reports.push_back(nlohmann::json::parse(in));
      } catch (const nlohmann::json::exception& e) {
        throw ConfigError(r, 0, "", std::string("not a valid report: ") + e.what());
      }
    } else {
      reports.push_back(nlohmann::json::object());
    }
  }
  std::vector<std::pair<const Graph*, const Trace*>> runs;
  std::vector<std::pair<const Graph*, const nlohmann::json*>> reps;
  for (size_t i = 0; i < plans.size(); ++i) {
    runs.push_back({&plans[i].graph, &traces[i]});
    if (reports[i].contains("conv_algorithms")) reps.push_back({&plans[i].graph, &reports[i]});
  }
  const KernelTimeFit k = fit_kernel_times(runs);
  const WorkspaceFit ws = fit_conv_workspaces(reps);
  const GpuSpec input = gpu_spec_from_yaml(load_hardware_document(hw_path), hw_path);  // its base: chain laid under it
  const ClassScaleFit cs = fit_op_class_scale(runs, input);
  std::optional<ConcurrencyRegression> conc;
  if (micro_records) conc = regress_concurrency(*micro_records, input, micro_file);
  const YAML::Node fitted = apply_calibration(load_yaml_file(hw_path), micro ? &*micro : nullptr, k, &ws,
                                              class_model_only ? nullptr : &cs, conc ? &*conc : nullptr);
  YAML::Emitter em;
  em.SetDoublePrecision(6);  // the fits are not better than that; 17 digits only show binary rounding
  em << fitted;
  check_calibrated_hardware(em.c_str(), out_path, dirs);  // before anything is written
  write_file_atomically(out_path, "# Calibrated from " + std::to_string(dirs.size()) +
                                      " validate run(s) by dlsim calibrate; input " + hw_path + "\n" + em.c_str() + "\n",
                        "--out");
  out << "kernel times: " << k.times.size() << " signatures (" << k.batch_free.size() << " also by batch-free key)\n";
  out << "conv workspaces: " << ws.by_signature.size() << " signatures from --workspace any reports";
  if (ws.skipped) out << " (" << ws.skipped << " report(s) of the graph rule skipped: capped by the assumption)";
  out << "\nroofline correction per op kind (measured / single-efficiency roofline, median):";
  for (const auto& [kind, v] : cs.scale) out << " " << to_string(kind) << " " << v;
  out << (class_model_only ? "\n  not written (--class-model-only): unmeasured ops take the input's per-class model\n"
                           : "\n");
  if (micro) {
    for (const auto& [key, c] : micro->copies)
      out << (key.first == CopyDir::HostToDevice ? "h2d " : "d2h ") << (key.second ? "pinned   " : "pageable ")
          << c.bandwidth / 1e9 << " GB/s, latency " << c.latency_ns / 1e3 << " us (" << c.samples << " sizes)\n";
    for (const auto& [dir, bw] : micro->bidirectional_bandwidth)
      out << (dir == CopyDir::HostToDevice ? "h2d" : "d2h") << " pinned with the other direction busy: "
          << bw / 1e9 << " GB/s (not in the hardware file's schema)\n";
    out << "launch overhead " << micro->launch_overhead_ns / 1e3 << " us\n";
    if (conc && !conc->points.empty()) {
      out << "concurrent kernels: gemm_blocks_per_sm " << conc->gemm_blocks_per_sm << ", co_run_slowdown "
          << conc->co_run_slowdown << " (rms log error " << conc->rms_log_error << ")\n";
      for (const auto& p : conc->points)
        out << "  " << p.convs << " x " << p.shape << " (" << p.blocks << " blocks): speed-up measured "
            << p.measured_speedup << ", simulated " << p.simulated_speedup << "\n";
    } else {
      out << "concurrent kernels: no concurrency samples in micro.json; left as in " << hw_path << "\n";
    }
  } else {
    out << "no micro.json in the directories: PCIe, launch and cudaMalloc values left as in " << hw_path << "\n";
  }
  out << "wrote " << out_path << "\n";
  return 0;
}

int run_compare(const std::string& sim_trace, const std::string& real_trace, const std::string& plan_path,
                std::ostream& out, std::ostream& err, bool json) {
  const ProgramFile plan = read_program_file(plan_path);
  const Trace sim = read_trace_file(sim_trace), real = read_trace_file(real_trace);
  // Bad input, not a table of 0 % errors: a measured trace with nothing measured, and traces of another plan.
  check_trace_times(sim, sim_trace, false);
  check_trace_times(real, real_trace, true);
  check_trace_of_plan(sim, sim_trace, plan, plan_path, err);
  check_trace_of_plan(real, real_trace, plan, plan_path, err);
  const Comparison c = compare_traces(sim, real, plan.graph);
  if (json) out << comparison_to_json(c).dump(1) << "\n";
  else print_comparison(c, out);
  return 0;
}

}  // namespace dlsim
