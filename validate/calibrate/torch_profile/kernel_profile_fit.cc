#include "validate/calibrate/torch_profile/kernel_profile_fit.h"

#include <algorithm>
#include <cstdio>

#include "hw/fitted/kernel_terms.h"
#include "hw/fitted/op_kernel_shapes.h"
#include "hw/op_signature.h"
#include "validate/calibrate/calibrate.h"
#include "common/strings.h"

namespace dlsim {
namespace {

// The fitted class that prices every kernel of the op (the first kernel's class names it), or "" when the fitted
// model does not price it.
std::string kernel_fit_class(const GpuSpec& spec, const Graph& g, const Op& op) {
  if (spec.kernel_model != "fitted" || spec.fitted_kernels.empty()) return "";
  const auto shapes = op_kernel_shapes(spec, g, op);
  if (!shapes || shapes->empty()) return "";
  std::string first;
  for (const KernelShape& k : *shapes) {
    std::string name;
    if (!find_class(spec.fitted_kernels, k, &name)) return "";
    if (first.empty()) first = name;
  }
  return first;
}

}  // namespace

KernelProfileFit fit_kernels_from_profiles(const std::vector<MatchedProfile>& profiles, const Hardware& hw) {
  KernelProfileFit out;
  const GpuSpec& spec = hw.spec;
  const RooflineCostModel plain = single_efficiency_roofline(spec);
  std::map<OpKind, double> kind_roofline_us;  // the single-efficiency roofline's time of each kind's measured ops
  std::map<OpKind, std::map<MathPath, size_t>> kind_paths;
  for (const MatchedProfile& p : profiles) {
    const Graph& g = *p.graph;
    for (const ProfileEvent& e : p.trace->events) out.trace_kernels += e.kind == ProfileEventKind::Kernel ? 1 : 0;
    std::vector<std::vector<OpId>> backward_of(g.ops().size());
    for (const Op& op : g.ops())
      if (op.phase == Phase::Backward && op.forward_op >= 0 && op.kind != OpKind::GradAccumulate)
        backward_of[static_cast<size_t>(op.forward_op)].push_back(op.id);
    // One unit: graph ops and the kernel time of the host ops that ran them.
    auto unit = [&](const std::vector<OpId>& ops, double measured_us) {
      if (ops.empty() || !(measured_us > 0)) return;
      std::vector<double> predicted;
      double total = 0;
      for (OpId id : ops) {
        predicted.push_back(static_cast<double>(hw.kernels->cost(g, g.op(id)).duration_ns) / 1e3);
        total += predicted.back();
      }
      if (!(total > 0)) return;
      for (size_t i = 0; i < ops.size(); ++i) {
        const Op& op = g.op(ops[i]);
        if (!(predicted[i] > 0)) continue;
        const double measured = measured_us * predicted[i] / total;
        if (!spec.kernel_times.empty() && spec.kernel_times.count(op_signature(g, op))) {
          ++out.table_ops;
          continue;
        }
        const std::string cls = kernel_fit_class(spec, g, op);
        if (!cls.empty()) {
          KernelClassCorrection& c = out.fitted_classes[cls];
          ++c.samples;
          c.measured_us += measured;
          c.predicted_us += predicted[i];
          continue;
        }
        const double roof = static_cast<double>(plain.cost(g, op).duration_ns) / 1e3;
        if (!(roof > 0)) continue;
        KernelClassCorrection& c = out.roofline_kinds[op.kind];
        ++c.samples;
        c.measured_us += measured;
        c.predicted_us += predicted[i];
        kind_roofline_us[op.kind] += roof;
        if (is_matrix_op(op.kind)) ++kind_paths[op.kind][math_path(spec, g, op)];
      }
    };
    for (const StepMatch& m : p.matches)
      for (const MatchedForwardOp& f : m.forward) {
        if (f.host->kernels > 0) {
          ++out.host_ops_with_kernels;
          out.kernels += static_cast<size_t>(f.host->kernels);
        }
        unit({f.graph_op}, f.host->kernel_us);
        double node_us = 0;
        for (const ProfileHostOp* h : f.nodes) {
          node_us += h->kernel_us;
          if (h->kernels > 0) {
            ++out.host_ops_with_kernels;
            out.kernels += static_cast<size_t>(h->kernels);
          }
        }
        unit(backward_of[static_cast<size_t>(f.graph_op)], node_us);
      }
  }
  for (auto& [cls, c] : out.fitted_classes) {
    c.scale = c.measured_us / c.predicted_us;
    FittedKernelClass k = spec.fitted_kernels.classes.at(cls);
    k.fixed_us *= c.scale;
    k.flop_scale *= c.scale;
    k.wave_scale *= c.scale;
    k.byte_scale *= c.scale;
    k.channel_scale *= c.scale;
    k.channel_bwd_scale *= c.scale;
    k.chunk_scale *= c.scale;
    out.corrected.classes[cls] = k;
  }
  for (auto& [kind, c] : out.roofline_kinds) {
    c.scale = c.measured_us / kind_roofline_us[kind];
    if (is_matrix_op(kind)) {  // the path most of the kind's ops took (std::map: the first of equal counts)
      const auto& paths = kind_paths[kind];
      auto best = std::max_element(paths.begin(), paths.end(),
                                   [](const auto& a, const auto& b) { return a.second < b.second; });
      out.roofline_paths[kind] = best->first;
    }
  }
  return out;
}

std::string kernel_corrections_yaml(const KernelProfileFit& f) {
  std::string out;
  if (!f.corrected.classes.empty()) {
    out += "kernel_model:\n  classes:\n";
    for (const auto& [name, c] : f.corrected.classes)
      out += "    " + name + ": {fixed_us: " + significant(c.fixed_us) + ", flop_scale: " +
             significant(c.flop_scale) + ", wave_scale: " + significant(c.wave_scale) +
             ", byte_scale: " + significant(c.byte_scale) +
             (c.channel_scale > 0 ? ", channel_scale: " + significant(c.channel_scale) : std::string()) +
             (c.channel_bwd_scale > 0 ? ", channel_bwd_scale: " + significant(c.channel_bwd_scale)
                                      : std::string()) +
             (c.chunk_scale > 0 ? ", chunk_scale: " + significant(c.chunk_scale) : std::string()) +
             ", records: " + std::to_string(c.records) + "}\n";
  }
  if (!f.roofline_kinds.empty()) {
    out += "roofline:\n  op_class_scale:\n";
    for (const auto& [kind, c] : f.roofline_kinds)
      out += std::string("    ") + to_string(kind) + ": " + significant(c.scale) + "\n";
    if (!f.roofline_paths.empty()) {
      out += "  op_class_scale_path:\n";
      for (const auto& [kind, p] : f.roofline_paths)
        out += std::string("    ") + to_string(kind) + ": " + to_string(p) + "\n";
    }
  }
  return out;
}

}  // namespace dlsim
