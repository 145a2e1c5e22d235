#include "policies/pool/smartpool_pattern.h"

#include <algorithm>
#include <map>

namespace dlsim {

std::vector<int64_t> trace_signature(const std::vector<TraceOp>& ops) {
  std::vector<int64_t> sig(ops.size(), 0);
  std::map<DevPtr, size_t> open;  // pointer -> index of its pending Malloc
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].is_malloc) {
      sig[i] = static_cast<int64_t>(ops[i].size);
      open[ops[i].ptr] = i;
    } else if (auto it = open.find(ops[i].ptr); it != open.end()) {
      sig[i] = static_cast<int64_t>(i - it->second);
      open.erase(it);
    }
  }
  return sig;
}

Repeat longest_repeat(const std::vector<int64_t>& sig, size_t begin, size_t end) {
  if (end <= begin) return {};
  for (size_t len = (end - begin) / 2; len >= 1; --len) {
    for (size_t i = begin; i + 2 * len <= end; ++i) {
      size_t j = 0;
      while (j + 1 < len && sig[i + j] == sig[i + len + j]) ++j;
      if (j + 1 >= len) return {i, len};
    }
  }
  return {};
}

Repeat detect_iteration(const std::vector<TraceOp>& ops, const PatternParams& p) {
  const auto sig = trace_signature(ops);
  Repeat r = longest_repeat(sig, 0, sig.size());
  if (r.length == 0) return {};
  const Repeat inner = longest_repeat(sig, r.start, r.start + r.length);
  if (inner.length > p.verify_length) r = inner;
  if (r.length <= p.min_length) return {};
  return r;
}

size_t quietest_phase(const std::vector<TraceOp>& ops, const Repeat& r) {
  std::map<DevPtr, uint64_t> open;  // pointer -> size of its pending Malloc
  uint64_t live = 0;
  size_t best = r.start;
  uint64_t best_live = 0;
  const size_t end = std::min(ops.size(), r.start + r.length);
  for (size_t i = 0; i < end; ++i) {
    if (i == r.start || (i > r.start && live < best_live)) {  // live: the bytes live before op i
      best = i;
      best_live = live;
    }
    if (ops[i].is_malloc) {
      open[ops[i].ptr] = ops[i].size;
      live += ops[i].size;
    } else if (auto it = open.find(ops[i].ptr); it != open.end()) {
      live -= it->second;
      open.erase(it);
    }
  }
  return best;
}

}  // namespace dlsim
