#include "hw/kernel_variants.h"

#include <algorithm>
#include <cmath>

namespace dlsim {

bool has_kernel_variants(OpKind k) {
  return k == OpKind::Conv2d || k == OpKind::Conv2dBwdData || k == OpKind::Conv2dBwdFilter;
}

std::vector<KernelVariant> derived_kernel_variants(const Op& op, const KernelCost& base, uint64_t workspace_bytes) {
  std::vector<KernelVariant> v;
  v.push_back({"default", base, workspace_bytes});
  if (!has_kernel_variants(op.kind) || base.duration_ns <= 0) return v;
  auto slower = [&](double factor) {
    return static_cast<TimeNs>(std::llround(static_cast<double>(base.duration_ns) * factor));
  };
  // Copies of variant 0 so that every other field (the grid's blocks per SM) carries over; the small-grid
  // kernel launches half the thread blocks, each doing twice the work.
  KernelCost small = base;
  small.duration_ns = slower(kSmallGridSlowdown);
  small.sm_fraction = base.sm_fraction / 2;
  if (base.blocks > 0) small.blocks = std::max<int64_t>(1, base.blocks / 2);
  v.push_back({"small-grid", small, workspace_bytes});
  KernelCost implicit = base;
  implicit.duration_ns = slower(kImplicitGemmSlowdown);
  v.push_back({"implicit-gemm", implicit, 0});
  return v;
}

std::vector<KernelVariant> KernelCostModel::variants(const Graph& g, const Op& op) const {
  const uint64_t ws = op.workspace == kNoTensor ? 0 : g.tensor(op.workspace).bytes;
  return derived_kernel_variants(op, cost(g, op), ws);
}

}  // namespace dlsim
