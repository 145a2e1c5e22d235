#include "policies/pool/smartpool_pattern.h"

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

}  // namespace dlsim
