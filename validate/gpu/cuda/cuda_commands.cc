#include "validate/gpu/cuda/cuda_commands.h"

#include "common/atomic_file.h"
#include "common/config_error.h"
#include "validate/gpu/cuda/cuda_executor.h"
#include "validate/gpu/cuda/device_info.h"
#include "validate/gpu/cuda/microbench.h"
#include "validate/gpu/cuda/selftest.h"
#include "validate/gpu/program_file.h"

namespace dlsim::cuda {

namespace {

constexpr const char* kUsage =
    "usage: dlsim-cuda devices\n"
    "       dlsim-cuda run PLAN.json --out TRACE.json [--report REPORT.json] [--warmup N] [--iterations N] [--check]\n"
    "                 [--workspace graph|any] [--cuda-graph] [--cudnn-api graph|legacy]\n"
    "       dlsim-cuda microbench --out MICRO.json [--quick]\n"
    "       dlsim-cuda selftest       (our kernels against CPU references; exit 1 when one fails)\n";

void write_json(const nlohmann::json& j, const std::string& path) {
  write_file_atomically(path, j.dump(1) + "\n");
}

int parse_count(const std::string& flag, const std::string& v) {
  try {
    size_t used = 0;
    const int n = std::stoi(v, &used);
    if (used == v.size() && n >= 0) return n;
  } catch (const std::exception&) {
  }
  throw ConfigError("command line", 0, flag, "expected a non-negative integer, got '" + v + "'");
}

}  // namespace

int main_with_args(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty()) {
    err << kUsage;
    return 2;
  }
  const std::string& cmd = args[0];
  std::string plan_path, out_path, report_path;
  int warmup = -1, iterations = -1;
  bool quick = false;
  RunOptions run_options;
  for (size_t i = 1; i < args.size(); ++i) {
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw ConfigError("command line", 0, args[i], "needs a value");
      return args[++i];
    };
    if (args[i] == "--out") out_path = value();
    else if (args[i] == "--report") report_path = value();
    else if (args[i] == "--warmup") warmup = parse_count("--warmup", value());
    else if (args[i] == "--iterations") iterations = parse_count("--iterations", value());
    else if (args[i] == "--quick") quick = true;
    else if (args[i] == "--check") run_options.check = true;
    else if (args[i] == "--cuda-graph") run_options.cuda_graph = true;
    else if (args[i] == "--workspace") {
      const std::string& v = value();
      if (v == "graph") run_options.workspace = WorkspaceRule::Graph;
      else if (v == "any") run_options.workspace = WorkspaceRule::Any;
      else throw ConfigError("command line", 0, "--workspace", "expected 'graph' or 'any', got '" + v + "'");
    }
    else if (args[i] == "--cudnn-api") {
      const std::string& v = value();
      if (v == "graph") run_options.cudnn_api = CudnnApi::Graph;
      else if (v == "legacy") run_options.cudnn_api = CudnnApi::Legacy;
      else throw ConfigError("command line", 0, "--cudnn-api", "expected 'graph' or 'legacy', got '" + v + "'");
    }
    else if (plan_path.empty() && args[i][0] != '-') plan_path = args[i];
    else throw ConfigError("command line", 0, args[i], std::string("unknown argument\n") + kUsage);
  }
  if (cmd != "devices" && cmd != "run" && cmd != "microbench" && cmd != "selftest") {
    err << "dlsim-cuda: unknown command '" << cmd << "'\n" << kUsage;
    return 2;
  }
  if (cmd != "devices" && cmd != "selftest" && out_path.empty()) {
    err << "dlsim-cuda " << cmd << ": --out is required\n" << kUsage;
    return 2;
  }
  // Read the plan before looking for a GPU, so that a bad file is reported the same way everywhere.
  ProgramFile plan;
  if (cmd == "run") {
    if (plan_path.empty()) throw ConfigError("command line", 0, "PLAN.json", std::string("missing\n") + kUsage);
    plan = read_program_file(plan_path);
    if (warmup >= 0) plan.warmup = warmup;
    if (iterations > 0) plan.iterations = iterations;
  }
  std::string why;
  const int n = count_gpus(why);
  if (n == 0) {
    err << "dlsim-cuda: no CUDA GPU available (" << why << "); real-GPU validation needs a machine with an NVIDIA GPU\n";
    return kExitNoGpu;
  }
  if (cmd == "devices") {
    for (int i = 0; i < n; ++i) out << i << ": " << describe_device(i) << "\n";
    return 0;
  }
  if (cmd == "selftest") return run_selftest(out) == 0 ? 0 : 1;
  if (cmd == "microbench") {
    const MicrobenchResults r = run_microbenchmarks(quick, err);
    write_json(to_json(r), out_path);
    out << "wrote " << out_path << "\n";
    return 0;
  }
  GpuRun run = run_plan_on_gpu(plan, err, run_options);
  run.trace.program_hash = program_fingerprint(plan);  // `dlsim compare` checks the trace is of its plan
  write_json(to_json(run.trace), out_path);
  if (!report_path.empty()) write_json(run.report, report_path);
  out << "wrote " << out_path << (run.trace.oom ? " (out of memory: " + run.trace.oom_where + ")" : "") << "\n";
  return run.trace.oom ? 4 : 0;
}

}  // namespace dlsim::cuda
