#include "sim/check/memory_reuse_check.h"

#include <algorithm>
#include <limits>
#include <map>

#include "sim/check/copy_matching.h"

namespace dlsim {

namespace {

struct Lifetime {
  TensorId tensor = kNoTensor;
  uint64_t lo = 0, hi = 0;  // [lo, hi): the tensor's bytes
  TimeNs first = std::numeric_limits<TimeNs>::max();  // the earliest start of its device work
  TimeNs last = std::numeric_limits<TimeNs>::min();   // the latest end
  void touch(TimeNs start, TimeNs end) {
    first = std::min(first, start);
    last = std::max(last, end);
  }
};

}  // namespace

std::vector<std::string> check_memory_reuse(const Graph& g, const Program& p, const Trace& tr) {
  std::vector<std::string> problems;
  if (tr.oom || tr.iterations.empty()) return problems;
  const int it = static_cast<int>(tr.iterations.size()) - 1;
  // Each launch's own record: an op launched twice in an iteration (a recomputation's replay) has one record per
  // launch, the k-th launch in program order matching the k-th record by start.
  std::map<OpId, std::vector<const OpRecord*>> ops;
  for (const OpRecord& r : tr.ops)
    if (r.iteration == it) ops[r.op].push_back(&r);
  for (auto& [op, v] : ops)
    std::stable_sort(v.begin(), v.end(), [](const OpRecord* a, const OpRecord* b) { return a->start < b->start; });
  std::map<OpId, size_t> launched;
  // A one-iteration run's only iteration is the first, which Program::first_iteration may replace.
  const std::vector<Command>& cmds = it == 0 && !p.first_iteration.empty() ? p.first_iteration : p.iteration;
  const std::vector<const CopyRecord*> copy_of = match_copies(cmds, tr, it);
  std::vector<const MemRecord*> mem;
  for (const MemRecord& m : tr.mem)
    if (m.iteration == it) mem.push_back(&m);

  std::vector<Lifetime> lives;
  std::vector<int> current(g.tensors().size(), -1);  // TensorId -> its lifetime, while allocated
  size_t m = 0;
  auto touch = [&](TensorId t, TimeNs start, TimeNs end) {
    if (t != kNoTensor && current[static_cast<size_t>(t)] >= 0) lives[static_cast<size_t>(current[static_cast<size_t>(t)])].touch(start, end);
  };
  for (size_t i = 0; i < cmds.size(); ++i) {
    const Command& c = cmds[i];
    switch (c.kind) {
      case CmdKind::Alloc:
        if (m >= mem.size()) return problems;  // a trace without memory records: nothing to check
        current[static_cast<size_t>(c.tensor)] = static_cast<int>(lives.size());
        lives.push_back({c.tensor, mem[m]->address, mem[m]->address + mem[m]->bytes});
        ++m;
        break;
      case CmdKind::Free:
        current[static_cast<size_t>(c.tensor)] = -1;
        ++m;
        break;
      case CmdKind::Launch: {
        auto r = ops.find(c.op);
        const size_t k = launched[c.op]++;
        if (r == ops.end() || k >= r->second.size()) break;
        const OpRecord& rec = *r->second[k];
        const Op& op = g.op(c.op);
        for (TensorId t : c.replay ? g.replay_inputs(op) : op.inputs) touch(t, rec.start, rec.end);
        for (TensorId t : op.outputs) touch(t, rec.start, rec.end);
        touch(op.workspace, rec.start, rec.end);
        break;
      }
      case CmdKind::CopyIn:
      case CmdKind::CopyOut:
        if (copy_of[i]) touch(c.tensor, copy_of[i]->start, copy_of[i]->end);
        break;
      default: break;
    }
  }
  // Lifetimes in allocation order: any two whose ranges overlap were held one after the other in host order.
  std::vector<size_t> by_addr(lives.size());
  for (size_t i = 0; i < lives.size(); ++i) by_addr[i] = i;
  std::sort(by_addr.begin(), by_addr.end(), [&](size_t a, size_t b) { return lives[a].lo < lives[b].lo; });
  for (size_t x = 0; x < by_addr.size(); ++x) {
    const Lifetime& a = lives[by_addr[x]];
    for (size_t y = x + 1; y < by_addr.size() && lives[by_addr[y]].lo < a.hi; ++y) {
      const size_t i = std::min(by_addr[x], by_addr[y]), j = std::max(by_addr[x], by_addr[y]);
      const Lifetime& before = lives[i];
      const Lifetime& after = lives[j];
      if (before.hi <= before.lo || after.hi <= after.lo) continue;  // zero bytes overlap nothing
      if (before.last == std::numeric_limits<TimeNs>::min() || after.first == std::numeric_limits<TimeNs>::max()) continue;
      if (after.first < before.last)
        problems.push_back("tensor '" + g.tensor(after.tensor).name + "' reuses the memory of tensor '" +
                           g.tensor(before.tensor).name + "' on the device at " + std::to_string(after.first) +
                           " ns, before that tensor's last work ended at " + std::to_string(before.last) + " ns");
    }
  }
  return problems;
}

}  // namespace dlsim
