#include "policies/swap/checkpoint/selective_checkpoint.h"

namespace dlsim {

std::optional<SelectiveCheckpointing> parse_selective(const std::string& s) {
  SelectiveCheckpointing out;
  if (s.empty()) return out;
  if (s == "op") {
    out.mode = SelectiveCheckpointing::Mode::Op;
    return out;
  }
  if (s.size() > 9 || s[0] == '0') return std::nullopt;  // positive, and far fewer than 10^9 blocks
  int64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  out.mode = SelectiveCheckpointing::Mode::Layer;
  out.layer_every = n;
  return out;
}

bool is_aten_mm(const Op& op) {
  return op.kind == OpKind::Linear && !(op.has_attr(Attr::bias) && op.attr(Attr::bias) != 0);
}

std::vector<OpId> op_policy_saved_ops(const Graph& g, const std::vector<OpId>& region) {
  std::vector<OpId> out;
  int64_t mm_count = 0;  // torchtitan's meta["forward_mm_count"], one per region's checkpoint call
  for (OpId id : region) {
    const Op& op = g.op(id);
    bool save = false;
    if (is_aten_mm(op)) {
      ++mm_count;
      save = mm_count % 2 == 1;
    } else {
      save = op.kind == OpKind::FlashAttention || op.kind == OpKind::ReduceScatter;
    }
    if (save) out.push_back(id);
  }
  return out;
}

std::vector<int64_t> layer_policy_blocks(int64_t n, int64_t every) {
  std::vector<int64_t> out;
  for (int64_t i = 0; every > 0 && i < n; ++i)
    if ((i + 1) % every == 0) out.push_back(i);
  return out;
}

}  // namespace dlsim
