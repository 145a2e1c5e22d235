#include "validate/calibrate/torch_profile/torch_profile_calibration.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "common/config_error.h"
#include "hw/gpu_spec_file.h"
#include "hw/hardware_base.h"
#include "hw/hardware.h"
#include "validate/calibrate/torch_profile/host_profile_fit.h"
#include "validate/calibrate/torch_profile/kernel_profile_fit.h"
#include "validate/calibrate/torch_profile/matched_profiles.h"
#include "common/strings.h"

namespace dlsim {
namespace {

constexpr size_t kProfileListed = 10;  // unmatched ops named per trace

std::string profile_quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return q + "\"";
}

void profile_report_trace(std::ostream& r, const MatchedProfile& p, const std::string& model) {
  const ProfilerTrace& t = *p.trace;
  size_t fwd = 0, nodes = 0, accumulate = 0, unmatched = 0, host_ops = 0, without_op = 0;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const StepMatch& m = p.matches[i];
    fwd += m.forward.size();
    for (const MatchedForwardOp& f : m.forward) nodes += f.nodes.size();
    accumulate += m.accumulate_grad.size();
    without_op += m.without_op.size();
    unmatched += m.unmatched.size();
    host_ops += p.steps[i].forward.size() + p.steps[i].backward.size() + p.steps[i].other.size();
  }
  r << "trace " << t.file << (t.recorded.empty() ? "" : " (" + t.recorded + ")") << ": " << p.steps.size()
    << " step(s) of " << model << "\n";
  r << "  matched per step: " << fwd / p.steps.size() << " forward ops of the graph's "
    << p.matches.front().graph_forward_ops << ", " << nodes / p.steps.size() << " autograd nodes, "
    << accumulate / p.steps.size() << " AccumulateGrad nodes; " << without_op / p.steps.size()
    << " views and allocations (no kernel, no op of the graph) with their nodes\n";
  r << "  unmatched trace ops: " << unmatched << " of " << host_ops;
  if (unmatched == 0) r << "\n";
  else r << " (the first " << std::min(unmatched, kProfileListed) << "):\n";
  size_t listed = 0;
  for (const StepMatch& m : p.matches)
    for (const UnmatchedProfileOp& u : m.unmatched)
      if (listed++ < kProfileListed) r << "    " << u.what << "\n";
  const StepMatch& m0 = p.matches.front();
  r << "  graph forward ops no trace op matched (step 1): " << m0.graph_unmatched.size();
  for (size_t i = 0; i < m0.graph_unmatched.size() && i < kProfileListed; ++i) {
    const Op& op = p.graph->op(m0.graph_unmatched[i]);
    r << (i ? ", " : " (") << op.name << " [" << to_string(op.kind) << "]";
  }
  r << (m0.graph_unmatched.empty() ? "\n" : m0.graph_unmatched.size() > kProfileListed ? ", ...)\n" : ")\n");
}

}  // namespace

int run_torch_profile_calibration(const TorchProfileOptions& o, std::ostream& report) {
  const Hardware hw = load_hardware(o.hw);
  const MatchedProfiles matched = load_matched_profiles(o.traces, o.experiments);
  const std::vector<MatchedProfile>& profiles = matched.profiles;

  report << "dlsim calibrate --torch-profile: " << o.traces.size() << " trace(s), starting from " << o.hw << "\n";
  for (size_t i = 0; i < profiles.size(); ++i)
    profile_report_trace(report, profiles[i], matched.models[i]);

  const EagerHostSpec* base = hw.spec.eager_host ? &*hw.spec.eager_host : nullptr;
  const HostProfileFit host = fit_host_from_profiles(profiles, base);
  const KernelProfileFit kernels = fit_kernels_from_profiles(profiles, hw);

  report << "host_cpu.pytorch_eager, from " << host.steps << " step(s):\n"
         << "  the profiled steps' host time " << fixed(host.profiled_host_us / 1e3, 3)
         << " ms per step (ProfilerStep spans less the waits for the GPU)";
  if (host.overhead_measured)
    report << "; without the profiler " << fixed(host.target_host_us / 1e3, 3) << " ms (the trace's "
           << "unprofiled step time: the profiler's overhead factor " << fixed(host.overhead_factor, 3)
           << ")\n";
  else
    report << "; no step time without the profiler in every trace (record_profile.py adds it): the fitted costs "
              "keep the profiler's overhead\n";
  report << "  scale " << fixed(host.scale, 4) << " on the ops' mean profiled costs; dlsim's host time "
         << "with the fitted section: " << fixed(host.predicted_host_us / 1e3, 3) << " ms per step\n";
  for (size_t i = 0; i < profiles.size(); ++i)
    report << "  " << profiles[i].trace->file << ": measured " << fixed(host.per_trace[i].first / 1e3, 3)
           << " ms per step, dlsim " << fixed(host.per_trace[i].second / 1e3, 3) << " ms ("
           << fixed(100.0 * (host.per_trace[i].second / host.per_trace[i].first - 1), 1) << " %)\n";
  report << "  key                        samples  profiled us   fitted us   --hw file us  source\n";
  for (const std::string& k : eager_host_keys()) {
    const HostKeyFit& f = host.keys.at(k);
    char line[256];
    std::snprintf(line, sizeof line, "  %-26s %7zu %12.2f %11.2f %14s  %s\n", k.c_str(), f.samples, f.profiled_us,
                  f.fitted_us, base ? fixed(eager_host_key_us(*base, k), 2).c_str() : "-", f.source.c_str());
    report << line;
  }
  if (kernels.empty()) {
    report << "kernels: none of the matched ops launched a GPU kernel in the traces (a host-only trace, or one "
              "recorded without ProfilerActivity.CUDA): the kernel times stay the --hw file's\n";
  } else {
    report << "kernels: " << kernels.kernels << " from " << kernels.host_ops_with_kernels << " matched host ops (of "
           << kernels.trace_kernels << " in the traces: the others ran under unmatched ops or outside the steps)"
           << (kernels.table_ops ? ", " + std::to_string(kernels.table_ops) + " ops priced by kernel_times left alone" : "")
           << "\n";
    for (const auto& [cls, c] : kernels.fitted_classes)
      report << "  kernel_model class " << cls << ": " << c.samples << " ops, measured " << fixed(c.measured_us, 1)
             << " us against " << fixed(c.predicted_us, 1) << " us predicted, scale " << fixed(c.scale, 4) << "\n";
    for (const auto& [kind, c] : kernels.roofline_kinds)
      report << "  roofline.op_class_scale." << to_string(kind) << ": " << c.samples << " ops, measured "
             << fixed(c.measured_us, 1) << " us against " << fixed(c.predicted_us, 1)
             << " us predicted, factor " << fixed(c.scale, 4) << " on the single-efficiency roofline\n";
  }

  std::ostringstream y;
  y << "# Written by dlsim calibrate --torch-profile from";
  for (const std::string& t : o.traces) y << " " << t;
  y << " (" << host.steps << " profiled steps), starting from " << o.hw << ".\n"
    << "# host_cpu.pytorch_eager: the matched ops' mean host costs times " << fixed(host.scale, 4)
    << (host.overhead_measured ? ", so that dlsim's host time per step is the step's measured without the profiler.\n"
                               : ", so that dlsim's host time per step is the profiled step's (profiler overhead in).\n");
  if (!kernels.empty()) y << "# Kernel corrections: the median of measured over predicted per class, from the traces' kernels.\n";
  y << "base: " << hardware_base_reference(o.hw, o.out) << "\n"
    << "description: " << profile_quoted(hw.spec.description + ", calibrated to torch.profiler traces") << "\n"
    << "host_cpu:\n" << eager_host_section_yaml(host.spec) << kernel_corrections_yaml(kernels);
  {
    std::ofstream f(o.out, std::ios::binary | std::ios::trunc);
    if (!f) throw ConfigError(o.out, 0, "", "cannot write the hardware file");
    f << y.str();
    if (!f.flush()) throw ConfigError(o.out, 0, "", "cannot write the hardware file");
  }
  try {
    load_hardware(o.out);
  } catch (const ConfigError&) {
    std::filesystem::remove(o.out);
    throw;
  }
  report << "wrote " << o.out << "\n";
  return 0;
}

}  // namespace dlsim
