#include "policies/swap/save_on_cpu/save_on_cpu_swap.h"

#include <algorithm>
#include <map>

#include "policies/swap/core/program_load.h"

namespace dlsim {

namespace {
// One backward node's reads of one saved tensor: its first and last position.
struct NodeUse {
  int first = 0, last = 0;
};
}  // namespace

SwapResult SaveOnCpuSwap::plan(const SwapContext& ctx) {
  const Graph& g = ctx.graph;
  const std::vector<OpId>& order = ctx.schedule.order;
  const int n = static_cast<int>(order.size());
  const ProgramLoad load(g, order);
  std::vector<int> pos_of(g.ops().size(), -1);
  for (int p = 0; p < n; ++p) pos_of[static_cast<size_t>(order[static_cast<size_t>(p)])] = p;

  // saved[t]: (forward op position, that node's reads of t), nodes in backward order.
  std::map<TensorId, std::vector<std::pair<int, NodeUse>>> saved;
  for (int p = 0; p < n; ++p) {
    const Op& b = g.op(order[static_cast<size_t>(p)]);
    if (b.phase != Phase::Backward || b.forward_op < 0) continue;
    for (TensorId t : b.inputs) {
      if (g.tensor(t).kind == TensorKind::Gradient) continue;
      const int f = pos_of[static_cast<size_t>(b.forward_op)];
      const Op& fwd = g.op(b.forward_op);
      const bool touched_by_f = std::count(fwd.inputs.begin(), fwd.inputs.end(), t) ||
                                std::count(fwd.outputs.begin(), fwd.outputs.end(), t);
      if (!touched_by_f) continue;  // not something F saved (F's backward reads only its saved set and grads)
      auto& nodes = saved[t];
      auto it = std::find_if(nodes.begin(), nodes.end(), [&](const auto& x) { return x.first == f; });
      if (it == nodes.end()) nodes.push_back({f, {p, p}});
      else it->second.last = p;
    }
  }

  SwapResult out;
  out.plan.streams = CopyStreams::Compute;
  out.plan.host_waits_for_copy_out = true;
  uint64_t pack_bytes = 0, unpack_bytes = 0, param_bytes = 0;
  size_t packs = 0, unpacks = 0;
  for (auto& [t, nodes] : saved) {
    const Tensor& x = g.tensor(t);
    std::sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
    int last_pack = -1;
    for (const auto& [f, use] : nodes) {  // one pack per op that saved it
      out.plan.copies.push_back({t, f, true});
      last_pack = std::max(last_pack, f);
      ++packs;
      pack_bytes += x.bytes;
      if (x.persistent) param_bytes += x.bytes;
    }
    unpacks += nodes.size();
    unpack_bytes += x.bytes * nodes.size();
    if (x.persistent) {  // the module keeps the parameter on the device: each unpack is a copy into a twin
      for (const auto& node : nodes) out.plan.copies.push_back({t, node.second.first, false});
      continue;
    }
    int last_fwd = -1;
    for (int u : load.uses(t))
      if (g.op(order[static_cast<size_t>(u)]).phase == Phase::Forward) last_fwd = u;
    // The last write to t in (after, upto], or -1: a write after the host copy was made leaves that copy stale.
    // In graph order that is a forward op rewriting t in place after its pack; a schedule that runs a forward op
    // late (critical-path puts a branch nothing downstream waits for among the backward ops) can put one between
    // two unpacks too (simulation fuzzer, seed 13,522,640).
    auto last_write = [&, tensor = t](int after, int upto) {  // (a structured binding is not captured by clang 14)
      int last = -1;
      for (int w : load.writes(tensor))
        if (w > after && w <= upto) last = std::max(last, w);
      return last;
    };
    int host_at = last_pack;  // the host copy is t as it was after this position
    int held_until = last_fwd;  // the device copy is current up to here
    for (const auto& node : nodes) {
      const NodeUse& u = node.second;
      // The unpack comes before the first read of any op since the last device use, not only the node's own: the
      // layout transposes the memory-format pass puts before a 16-bit convolution's backward read the saved NCHW
      // tensor, but their node is the convolution, whose forward read only the transposed copy, so the reads
      // above do not count them.
      int needed = u.first;
      for (int w : load.uses(t))
        if (w > held_until && w < needed) needed = w;
      if (needed - 1 > held_until) {
        SwapAction a;
        a.tensor = t;
        a.out_after = held_until;
        a.free_after = held_until;
        a.copy_out = last_write(host_at, held_until) >= 0;  // the host copy is current unless t was rewritten
        if (a.copy_out) host_at = held_until;
        a.in_issue_after = needed - 1;
        a.in_needed_by = needed;
        out.plan.actions.push_back(a);
      } else {
        const int w = last_write(host_at, u.first - 1);  // re-made after a rewrite, so the unpack is current
        if (w >= 0) {
          out.plan.copies.push_back({t, w, true});
          host_at = w;
        }
        out.plan.copies.push_back({t, u.first, false});  // unpacked at once into the live copy
      }
      held_until = u.last;
    }
  }
  out.report = {{"packs", packs},
                {"pack_bytes", pack_bytes},
                {"parameter_pack_bytes", param_bytes},
                {"unpacks", unpacks},
                {"unpack_bytes", unpack_bytes},
                {"pytorch_pinned_host_bytes", pack_bytes}};
  return out;
}

}  // namespace dlsim
