#include "hw/fitted/fitted_cost_model.h"

#include <algorithm>

#include "common/sim_time.h"
#include "hw/collective_op.h"
#include "hw/fitted/kernel_terms.h"
#include "hw/fitted/op_kernel_shapes.h"
#include "hw/op_signature.h"

namespace dlsim {
namespace {

bool launches_kernel(const Op& op) { return op.flops > 0 || op.bytes_read > 0 || op.bytes_written > 0; }

}  // namespace

FittedCostModel::Source FittedCostModel::price(const Graph& g, const Op& op, TimeNs& ns,
                                               std::string* missing_class) const {
  const GpuSpec& s = spec();
  if (!s.kernel_times.empty()) {
    auto it = s.kernel_times.find(op_signature(g, op));
    if (it != s.kernel_times.end()) {
      ns = it->second;
      return Source::Measured;
    }
  }
  const auto shapes = op_kernel_shapes(s, g, op);
  if (!shapes || shapes->empty()) return Source::Roofline;
  double us = 0;
  for (const KernelShape& k : *shapes) {
    const FittedKernelClass* c = find_class(s.fitted_kernels, k);
    if (!c) {
      if (missing_class) *missing_class = class_candidates(k).front();
      return Source::Roofline;
    }
    us += device_time_us(s.fitted_kernels, *c, kernel_terms(k, s, s.fitted_kernels),
                         static_cast<double>(roofline_.options().kernel_fixed_ns) / 1e3);
  }
  ns = std::max<TimeNs>(1, checked_duration_ns(us * 1e3, s.file, "kernel_model.classes", "kernel '" + op.name + "'"));
  return Source::Fitted;
}

KernelCost FittedCostModel::cost(const Graph& g, const Op& op) const {
  // Every model prices a collective from the interconnect alike (hw/collective_op.h).
  if (is_collective(op.kind)) return collective_kernel_cost(spec(), op);
  if (!launches_kernel(op)) return roofline_.cost(g, op);  // a view: no kernel, 0 ns
  TimeNs ns = 0;
  if (price(g, op, ns, nullptr) == Source::Roofline) return roofline_.cost(g, op);
  const RooflineCostModel::Grid gr = roofline_.grid(g, op);
  return KernelCost{ns, roofline_.sm_fraction(g, op), gr.blocks, gr.blocks_per_sm};
}

FittedCoverage FittedCostModel::coverage(const Graph& g) const {
  FittedCoverage c;
  for (const Op& op : g.ops()) {
    if (!launches_kernel(op)) continue;
    ++c.ops;
    TimeNs ns = 0;
    std::string missing;
    switch (price(g, op, ns, &missing)) {
      case Source::Measured: ++c.measured; break;
      case Source::Fitted: ++c.fitted; break;
      case Source::Roofline:
        ++c.roofline;
        if (!missing.empty() &&
            std::find(c.missing_classes.begin(), c.missing_classes.end(), missing) == c.missing_classes.end())
          c.missing_classes.push_back(missing);
        break;
    }
  }
  return c;
}

nlohmann::json FittedCostModel::report(const Graph& g) const {
  const FittedCoverage c = coverage(g);
  return {{"ops", c.ops},
          {"fitted_ops", c.fitted},
          {"measured_ops", c.measured},
          {"roofline_ops", c.roofline},
          {"classes_not_fitted", c.missing_classes}};
}

void register_fitted(KernelModelRegistry& r) {
  r.add({"fitted",
         "kernel time from shape per class of library kernel, fitted to a sweep of measured kernels (the hardware "
         "file's kernel_model mapping, written by dlsim fit-kernels); an exact kernel_times entry first, the roofline "
         "(with these parameters: the roofline block) for what no class covers and for every kernel's SM share",
         RooflineOptions::parameters().specs(),
         [](const Params& p, const GpuSpec& spec) -> std::unique_ptr<KernelCostModel> {
           return std::make_unique<FittedCostModel>(spec, RooflineOptions::parameters().from_params(p));
         }});
}

}  // namespace dlsim
