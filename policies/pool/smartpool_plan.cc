#include "policies/pool/smartpool_plan.h"

#include <algorithm>
#include <limits>
#include <map>

namespace dlsim {

namespace {

struct Vertex {
  int slot;
  int64_t r, d;  // lifetime [r, d) in positions of the window
  uint64_t extent;
};

struct Range {
  uint64_t lo, hi;  // [lo, hi)
};

// Colours `group` (already in SINGA's order) above `floor`, given the vertices coloured before; returns the top.
uint64_t color(const std::vector<Vertex>& group, uint64_t floor, std::vector<Vertex>& colored,
               std::vector<SmartSlot>& slots, ColorMethod method) {
  uint64_t top = floor;
  for (const Vertex& v : group) {
    std::vector<Range> occ;
    for (const Vertex& u : colored)
      if (std::max(u.r, v.r) < std::min(u.d, v.d)) {
        const uint64_t o = slots[u.slot].offset;
        if (o + u.extent > floor) occ.push_back({std::max(o, floor), o + u.extent});
      }
    std::sort(occ.begin(), occ.end(), [](const Range& a, const Range& b) { return a.lo < b.lo || (a.lo == b.lo && a.hi < b.hi); });
    std::vector<Range> merged;
    for (const Range& x : occ) {
      if (!merged.empty() && x.lo <= merged.back().hi) merged.back().hi = std::max(merged.back().hi, x.hi);
      else merged.push_back(x);
    }
    uint64_t at;
    if (merged.empty() || (merged.size() == 1 && floor + v.extent <= merged[0].lo)) {
      at = floor;
    } else if (method == ColorMethod::FirstFit) {
      at = merged.back().hi;
      uint64_t from = floor;
      for (const Range& x : merged) {
        if (x.lo >= from + v.extent) {
          at = from;
          break;
        }
        from = x.hi;
      }
    } else {
      at = merged.back().hi;
      uint64_t best = std::numeric_limits<uint64_t>::max();
      for (size_t k = 0; k + 1 < merged.size(); ++k) {
        const uint64_t hole = merged[k + 1].lo - merged[k].hi;
        if (hole >= v.extent && hole < best) {
          best = hole;
          at = merged[k].hi;
        }
      }
    }
    slots[v.slot].offset = at;
    top = std::max(top, at + v.extent);
    colored.push_back(v);
  }
  return top;
}

}  // namespace

SmartPlan plan_smartpool(const std::vector<TraceOp>& ops, const Repeat& it, ColorMethod method) {
  SmartPlan plan;
  const int64_t L = static_cast<int64_t>(it.length);
  plan.slot_at.assign(it.length, -1);
  // Pair each Malloc of the window with the next Free of its pointer anywhere later in the trace.
  std::vector<Vertex> normal, cross;
  std::map<size_t, size_t> free_of;  // malloc index -> free index
  {
    std::map<DevPtr, size_t> open;
    for (size_t i = it.start; i < ops.size(); ++i) {
      if (ops[i].is_malloc) open[ops[i].ptr] = i;
      else if (auto o = open.find(ops[i].ptr); o != open.end()) {
        free_of[o->second] = i;
        open.erase(o);
      }
    }
  }
  for (size_t i = it.start; i < it.start + it.length; ++i) {
    if (!ops[i].is_malloc) continue;
    const int64_t r = static_cast<int64_t>(i - it.start);
    SmartSlot s;
    s.size = ops[i].size;
    s.extent = std::max<uint64_t>(s.size, 1);
    auto f = free_of.find(i);
    const bool crosses = f == free_of.end() || f->second >= it.start + it.length;
    s.cross_iteration = crosses;
    const int slot = static_cast<int>(plan.slots.size());
    plan.slots.push_back(s);
    plan.slot_at[r] = slot;
    const int64_t d = crosses ? L : static_cast<int64_t>(f->second - it.start);
    (crosses ? cross : normal).push_back({slot, r, d, s.extent});
  }
  auto order = [](const Vertex& a, const Vertex& b) { return a.extent > b.extent || (a.extent == b.extent && a.r < b.r); };
  std::sort(cross.begin(), cross.end(), order);
  std::sort(normal.begin(), normal.end(), order);
  std::vector<Vertex> colored;
  plan.cross_region = color(cross, 0, colored, plan.slots, method);
  plan.pool_bytes = color(normal, 2 * plan.cross_region, colored, plan.slots, method);
  return plan;
}

}  // namespace dlsim
