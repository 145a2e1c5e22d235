#pragma once
// `table`: kernel times measured on the real GPU (GpuSpec::kernel_times, keyed by op_signature), with the
// roofline for ops that were not measured. Calibration fills the table; the simulator then reproduces measured
// kernels. The default kernel model of a hardware file that has kernel_times; it takes the roofline's
// parameters (for its fallback and for sm_fraction, which a measurement does not tell).
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "hw/cost_model.h"
#include "hw/gpu_spec.h"
#include "hw/roofline.h"

namespace dlsim {

// How much of a graph the table covers.
struct TableCoverage {
  size_t ops = 0;                     // ops that launch a kernel (views with no work are not counted)
  size_t hits = 0;                    // of those, how many have a measured time
  size_t scaled = 0;                  // of the others, how many were measured at another batch (scaled)
  std::vector<std::string> missing;   // signatures with no measurement, each once, in first-seen order
};

class TableCostModel : public KernelCostModel {
 public:
  explicit TableCostModel(GpuSpec spec, RooflineOptions options = {}) : roofline_(std::move(spec), options) {}

  // A measured op: its measured duration and the roofline's sm_fraction (a measurement does not tell the grid).
  // An op measured only at another batch b: that time scaled to this batch N, as fixed + (t_b - fixed) * N / b
  // (fixed = kernel_fixed_ns), from the measured batch nearest to N. Otherwise the roofline's cost.
  KernelCost cost(const Graph& g, const Op& op) const override;

  TableCoverage coverage(const Graph& g) const;
  // coverage() for `run --json`: ops (that launch a kernel), measured_ops, unmeasured_signatures.
  nlohmann::json report(const Graph& g) const override;
  // Lookups made through cost() so far (thread-safe counters; cost() is const and may be shared).
  uint64_t hits() const { return hits_.load(); }
  uint64_t misses() const { return misses_.load(); }
  const GpuSpec& spec() const { return roofline_.spec(); }

 private:
  KernelCost with_grid(const Graph& g, const Op& op, TimeNs t) const;
  RooflineCostModel roofline_;
  mutable std::atomic<uint64_t> hits_{0};
  mutable std::atomic<uint64_t> misses_{0};
};

void register_table(KernelModelRegistry& r);

}  // namespace dlsim
