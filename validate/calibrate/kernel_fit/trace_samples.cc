#include "validate/calibrate/kernel_fit/trace_samples.h"

#include <map>
#include <optional>

#include "common/strings.h"
#include "hw/fitted/kernel_terms.h"
#include "hw/fitted/op_kernel_shapes.h"
#include "validate/calibrate/kernel_fit/multi_tensor_samples.h"

namespace dlsim {
namespace {

// What keeps k-fold's equal shapes together: the class and the quantities the model prices by.
std::string trace_shape_key(const std::string& cls, const KernelShape& k) {
  return cls + " flops=" + significant(k.flops) + " bytes=" + significant(k.bytes) + " grid=" +
         significant(k.grid.batch) + "x" + significant(k.grid.rows) + "x" + significant(k.grid.cols) + "x" +
         significant(k.grid.reduction) + (k.backward ? " bwd" : "") +
         (k.window_bytes > 0 ? " window=" + significant(k.window_bytes) : "") +
         (k.inputs > 0 ? " inputs=" + significant(k.inputs) + "x" + significant(k.input_blocks) + " idle=" +
                             significant(k.idle_blocks)
                       : "");
}

struct SampledOp {
  KernelShape shape;
  std::string cls;
  double predicted_us = 0;
  // The op's other kernels' predicted device time under `split`: the layout transposes cuDNN runs around an fp32
  // NCHW grouped convolution (hw/fitted/conv_backend.h), which the trace times with it and which are not its class's.
  double side_us = 0;
};

// The op's sampled kernel and its class's prediction under `split`, or why not. An op of several kernels is
// sampled only where the first is its compute kernel and the others memory-bound ones `split` prices (a grouped
// convolution's transposes); two compute kernels (a matrix product's two gradients) the trace cannot split.
std::optional<SampledOp> sampled_op(const GpuSpec& spec, const FittedKernels& split, const Graph& g, const Op& op,
                                    std::string& why) {
  const auto shapes = op_kernel_shapes(spec, g, op);
  if (!shapes || shapes->empty()) {
    why = "no kernel family in the fitted model (priced by the roofline)";
    return std::nullopt;
  }
  SampledOp s;
  for (size_t i = 1; i < shapes->size(); ++i) {
    const KernelShape& side = (*shapes)[i];
    const FittedKernelClass* c = is_memory_family(side.family) ? find_class(split, side) : nullptr;
    if (!c) {
      why = "more than one kernel per op (the trace cannot split them)";
      return std::nullopt;
    }
    s.side_us += device_time_us(split, *c, kernel_terms(side, spec, split), 0.0);
  }
  s.shape = shapes->front();
  s.cls = class_candidates(s.shape).front();
  const FittedKernelClass* c = find_class(split, s.shape);
  if (!c) {
    why = "no class of the sweep's fit to share the unit's time by";
    return std::nullopt;
  }
  s.predicted_us = class_time_us(*c, kernel_terms(s.shape, spec, split));
  if (!(s.predicted_us > 0)) {
    why = "the sweep's fit predicts no time for it";
    return std::nullopt;
  }
  return s;
}

}  // namespace

TraceSamples trace_fit_samples(const std::vector<MatchedProfile>& profiles, const GpuSpec& spec,
                               const FittedKernels& split, double gap_us) {
  TraceSamples out;
  std::map<std::string, std::map<std::string, size_t>> skipped;  // why -> op kind -> units
  for (const MatchedProfile& p : profiles) {
    const Graph& g = *p.graph;
    std::vector<std::vector<OpId>> backward_of(g.ops().size());
    for (const Op& op : g.ops())
      if (op.phase == Phase::Backward && op.forward_op >= 0 && op.kind != OpKind::GradAccumulate)
        backward_of[static_cast<size_t>(op.forward_op)].push_back(op.id);
    auto unit = [&](const std::vector<OpId>& ops, double measured_us, int64_t kernels) {
      if (ops.empty() || kernels <= 0 || !(measured_us > 0)) return;
      ++out.units;
      out.kernel_us += measured_us;
      std::vector<SampledOp> sampled;
      double total = 0, side = 0;
      for (OpId id : ops) {
        std::string why;
        auto s = sampled_op(spec, split, g, g.op(id), why);
        if (!s) {
          ++skipped[why][to_string(g.op(id).kind)];
          return;
        }
        total += s->predicted_us;
        side += s->side_us;
        sampled.push_back(std::move(*s));
      }
      const double unit_us = measured_us + gap_us * static_cast<double>(kernels) - side;
      if (!(unit_us > 0)) {
        ++skipped["its layout transposes' predicted time is all of the unit's"][to_string(g.op(ops.front()).kind)];
        return;
      }
      ++out.units_sampled;
      out.sampled_us += measured_us;
      for (SampledOp& s : sampled) {
        FitSample f;
        f.shape = s.shape;
        f.cls = s.cls;
        f.us = unit_us * s.predicted_us / total;
        f.shape_key = trace_shape_key(s.cls, s.shape);
        f.model = g.name;
        f.record = f.paired_record = out.samples.size();
        f.device_timed = true;
        out.samples.push_back(std::move(f));
      }
    };
    for (const StepMatch& m : p.matches)
      for (const MatchedForwardOp& f : m.forward) {
        // Training-mode batch norm's counter increment goes with the batch norm, as dlsim prices it.
        const double counter_us = f.bn_counter ? f.bn_counter->kernel_us : 0;
        const int64_t counter_kernels = f.bn_counter ? f.bn_counter->kernels : 0;
        unit({f.graph_op}, f.host->kernel_us + counter_us, f.host->kernels + counter_kernels);
        double node_us = 0;
        int64_t node_kernels = 0;
        for (const ProfileHostOp* h : f.nodes) {
          node_us += h->kernel_us;
          node_kernels += h->kernels;
        }
        unit(backward_of[static_cast<size_t>(f.graph_op)], node_us, node_kernels);
      }
    append_multi_tensor_samples(p, gap_us, out, skipped);  // the optimizer's launches (multi_tensor_samples.h)
  }
  // Each sample's weight: its time over its class's mean traced time, so that the fit's sum of relative errors
  // over a class's trace samples is its sum of absolute errors (in units of the mean): a step's time is a sum of
  // kernel times, and a fit to the median kernel leaves the long ones, most of the time, short.
  std::map<std::string, std::pair<double, size_t>> per_class;  // class -> (time, samples)
  for (const FitSample& s : out.samples) {
    per_class[s.cls].first += s.us;
    ++per_class[s.cls].second;
  }
  for (FitSample& s : out.samples) {
    const auto& [us, n] = per_class.at(s.cls);
    s.weight = s.us * static_cast<double>(n) / us;
  }
  for (const auto& [why, kinds] : skipped) {
    size_t n = 0;
    std::vector<std::string> names;
    for (const auto& [kind, count] : kinds) {
      n += count;
      names.push_back(kind + " " + std::to_string(count));
    }
    out.skipped.push_back(std::to_string(n) + " units (" + join(names) + "): " + why);
  }
  return out;
}

}  // namespace dlsim
