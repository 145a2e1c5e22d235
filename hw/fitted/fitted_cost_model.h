#pragma once
// `fitted`: kernel time from shape, per class (the hardware file's kernel_model mapping, hw/fitted/fitted_kernels.h).
// An op is priced, in this order:
//   1. by the file's measured kernel_times when its exact signature is there: a measurement of that very kernel
//      on this GPU is better evidence than a fit over other shapes (a file made from a sweep alone has none);
//   2. by its fitted class (hw/fitted/kernel_shape.h's class_candidates, best first), the sum over its kernels
//      (a matrix product's backward that computes both gradients is two GEMMs);
//   3. else by the roofline with the file's roofline block (per-class efficiencies, op_class_scale): the
//      optimizer's steps, and every class the sweep did not measure.
// The grid a kernel occupies (sm_fraction, blocks) is the roofline's in every case: a time does not tell it.
#include <atomic>
#include <string>
#include <vector>

#include "hw/cost_model.h"
#include "hw/gpu_spec.h"
#include "hw/roofline.h"

namespace dlsim {

// How a graph's kernel-launching ops were priced (run --json's kernel_report).
struct FittedCoverage {
  size_t ops = 0;       // ops that launch a kernel
  size_t fitted = 0;    // priced by a fitted class
  size_t measured = 0;  // by an exact kernel_times entry
  size_t roofline = 0;  // by the roofline
  std::vector<std::string> missing_classes;  // the best class of each roofline-priced op the file lacks, first-seen order
};

class FittedCostModel : public KernelCostModel {
 public:
  FittedCostModel(GpuSpec spec, RooflineOptions options) : roofline_(std::move(spec), options) {}

  KernelCost cost(const Graph& g, const Op& op) const override;
  FittedCoverage coverage(const Graph& g) const;
  nlohmann::json report(const Graph& g) const override;
  const GpuSpec& spec() const { return roofline_.spec(); }

 private:
  enum class Source { Measured, Fitted, Roofline };
  // The op's duration from the table or the fitted classes; Roofline (and no time) when neither serves it.
  Source price(const Graph& g, const Op& op, TimeNs& ns, std::string* missing_class) const;
  RooflineCostModel roofline_;
};

void register_fitted(KernelModelRegistry& r);

}  // namespace dlsim
