#include "policies/planners/placement_checker.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

namespace dlsim {

namespace {

std::string clash(const DsaBuffer& a, uint64_t oa, const DsaBuffer& b, uint64_t ob) {
  auto d = [](const DsaBuffer& x, uint64_t o) {
    return "buffer " + std::to_string(x.id) + " (live [" + std::to_string(x.lower) + "," + std::to_string(x.upper) +
           "), bytes [" + std::to_string(o) + "," + std::to_string(o + x.size) + "))";
  };
  return d(a, oa) + " overlaps " + d(b, ob);
}

}  // namespace

std::optional<std::string> check_placement(const std::vector<DsaBuffer>& buffers,
                                           const std::vector<uint64_t>& offsets) {
  if (offsets.size() != buffers.size())
    return "placement has " + std::to_string(offsets.size()) + " offsets for " + std::to_string(buffers.size()) +
           " buffers";
  // Events (time, kind, index) with ends (kind 0) before starts (kind 1) at equal times: half-open intervals.
  std::vector<std::tuple<int64_t, int, size_t>> events;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].size == 0) continue;  // occupies no byte
    // A buffer whose end wraps past 2^64 would look like one at low addresses to the sweep below.
    if (offsets[i] > UINT64_MAX - buffers[i].size)
      return "buffer " + std::to_string(buffers[i].id) + " at offset " + std::to_string(offsets[i]) + " of " +
             std::to_string(buffers[i].size) + " bytes ends past 2^64";
    events.emplace_back(buffers[i].lower, 1, i);
    events.emplace_back(buffers[i].upper, 0, i);
  }
  std::sort(events.begin(), events.end());
  // Live buffers keyed by start address. Live ranges are pairwise disjoint, so a newcomer only needs
  // comparing with its neighbours in address order.
  std::map<uint64_t, size_t> live;
  for (const auto& [t, kind, i] : events) {
    const uint64_t lo = offsets[i], hi = offsets[i] + buffers[i].size;
    if (kind == 0) {
      live.erase(lo);
      continue;
    }
    auto next = live.lower_bound(lo);
    if (next != live.end() && next->first < hi)
      return clash(buffers[i], lo, buffers[next->second], next->first);
    if (next != live.begin()) {
      auto prev = std::prev(next);
      if (prev->first + buffers[prev->second].size > lo)
        return clash(buffers[i], lo, buffers[prev->second], prev->first);
    }
    live.emplace(lo, i);
  }
  return std::nullopt;
}

}  // namespace dlsim
