#include "policies/swap/core/swap_lower_bound.h"

#include <algorithm>
#include <cmath>

namespace dlsim {

SwapLowerBound swap_lower_bound(const Graph& g, const ProgramLoad& load, const IterationProfile& profile,
                                const TransferModel& link, uint64_t limit) {
  SwapLowerBound b;
  const double bw_out = link.bandwidth(CopyDir::DeviceToHost, true) / 1e9;  // bytes per ns
  const double bw_in = link.bandwidth(CopyDir::HostToDevice, true) / 1e9;
  uint64_t persistent = 0;
  for (const Tensor& t : g.tensors())
    if (t.persistent) persistent += t.bytes;
  const double T = static_cast<double>(profile.iteration_ns);
  // Bytes that may be off the device during each op: tensors strictly between two of their uses (a plan's
  // absences are within one iteration, so a tensor before its first use or after its last one stays).
  const int n = load.positions();
  std::vector<int64_t> diff(static_cast<size_t>(n) + 1, 0);
  for (const Tensor& t : g.tensors()) {
    const auto& u = load.uses(t.id);
    for (size_t k = 0; k + 1 < u.size(); ++k)
      if (u[k + 1] - u[k] >= 2) {
        diff[static_cast<size_t>(u[k]) + 1] += static_cast<int64_t>(t.bytes);
        diff[static_cast<size_t>(u[k + 1])] -= static_cast<int64_t>(t.bytes);
      }
  }
  double stall = 0;
  int64_t movable = 0;
  for (int i = 0; i < n; ++i) {
    movable += diff[static_cast<size_t>(i)];
    const uint64_t l = load.load()[static_cast<size_t>(i)];
    const uint64_t stays = l - static_cast<uint64_t>(movable);
    b.least_reachable_bytes = std::max(b.least_reachable_bytes, stays);
    if (stays > limit) b.reachable = false;  // what cannot leave during this op alone exceeds the limit
    if (l <= limit) continue;
    const double excess = static_cast<double>(l - limit);
    stall = std::max({stall, excess / bw_out - T, excess / bw_in - T});
    // persistent tensors the op does not use could cover part of the excess from an earlier iteration
    const double transient = std::max(0.0, excess - static_cast<double>(persistent));
    const double s = static_cast<double>(profile.op_start[static_cast<size_t>(i)]);
    const double e = static_cast<double>(profile.op_end[static_cast<size_t>(i)]);
    stall = std::max({stall, transient / bw_out - s, transient / bw_in - (T - e)});
  }
  b.iteration_ns = static_cast<TimeNs>(std::ceil(T + std::max(0.0, stall)));
  return b;
}

}  // namespace dlsim
