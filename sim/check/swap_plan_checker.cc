#include "sim/check/swap_plan_checker.h"

#include <algorithm>
#include <map>
#include <set>

#include "sim/check/copy_matching.h"

namespace dlsim {

namespace {

enum class Held : uint8_t { Absent, Current, Stale };

// What a launch reads: a replay reads Graph::replay_inputs (FSDP: the regathered parameters), a first run the
// op's inputs.
std::vector<TensorId> reads(const Graph& g, const Command& c) {
  return c.replay ? g.replay_inputs(g.op(c.op)) : g.op(c.op).inputs;
}

bool touches(const Graph& g, const Command& c, TensorId t) {
  const std::vector<TensorId> in = reads(g, c);
  const Op& op = g.op(c.op);
  return std::count(in.begin(), in.end(), t) || std::count(op.outputs.begin(), op.outputs.end(), t);
}

// Part one: the data each command sees, walking setup and two iterations in host order.
void check_data(const Graph& g, const Program& p, std::vector<std::string>& problems) {
  const size_t nt = g.tensors().size();
  std::vector<Held> held(nt, Held::Absent);
  std::vector<uint8_t> host(nt, 0), seen(nt, 0);
  // Recomputation: each write of a tensor by an op's first launch in an iteration makes a new value; a launch of
  // an op that already ran (a replay) must read the values it read then, and so writes the same values again.
  std::vector<uint64_t> version(nt, 0), latest(nt, 0), host_version(nt, 0);  // the value held; the one an iteration without re-runs has
  std::map<OpId, std::vector<uint64_t>> read_first;  // per op launched this iteration: its inputs' versions then
  std::map<OpId, std::vector<uint64_t>> wrote_first;  // and the versions its outputs got
  auto name = [&](TensorId t) { return "'" + g.tensor(t).name + "'"; };
  // Host step: the tensors host ops touch have a host copy from the start (the CPU optimizer's master weights and
  // state are made from the model), and with delayed_host_update the device may read a value one host step old.
  std::vector<uint8_t> host_step_tensor(nt, 0);
  for (const Command& c : p.iteration)
    if (c.kind == CmdKind::HostCompute) {
      for (TensorId x : g.op(c.op).inputs) host_step_tensor[static_cast<size_t>(x)] = 1;
      for (TensorId x : g.op(c.op).outputs) host_step_tensor[static_cast<size_t>(x)] = 1;
    }
  for (const Tensor& x : g.tensors())
    if (x.persistent && host_step_tensor[static_cast<size_t>(x.id)]) host[static_cast<size_t>(x.id)] = 1;
  std::vector<uint8_t> host_written(nt, 0);  // written by a host op
  auto walk = [&](const std::vector<Command>& cmds, const std::string& where) {
    for (size_t i = 0; i < cmds.size(); ++i) {
      const Command& c = cmds[i];
      const std::string at = where + " command " + std::to_string(i) + ": ";
      const auto t = static_cast<size_t>(c.tensor);
      switch (c.kind) {
        case CmdKind::Alloc:
          held[t] = seen[t] ? Held::Stale : Held::Current;  // a first allocation holds what its first use makes
          seen[t] = 1;
          break;
        case CmdKind::Free: held[t] = Held::Absent; break;
        case CmdKind::Launch: {
          const Op& op = g.op(c.op);
          auto read_as_before = read_first.find(c.op);
          const bool replay = read_as_before != read_first.end();
          auto own_state = [&](TensorId x) {  // persistent state the op updates in place (batch-norm statistics)
            return g.tensor(x).persistent && std::count(op.outputs.begin(), op.outputs.end(), x);
          };
          const std::vector<TensorId> in = reads(g, c);  // a replay's regathered parameter holds the same values
          for (size_t k = 0; replay && k < in.size(); ++k) {
            const TensorId x = in[k];
            if (!own_state(x) && version[static_cast<size_t>(x)] != read_as_before->second[k])
              problems.push_back(at + "op '" + op.name + "' runs again reading tensor " + name(x) +
                                 ", which changed since its first run: the recomputed value would differ");
          }
          auto one_step_old = [&](TensorId x) {  // the delayed update's stale weight, as the Program declares
            const auto xi = static_cast<size_t>(x);
            return p.delayed_host_update && host_written[xi] && version[xi] + 1 == latest[xi];
          };
          for (TensorId x : op.inputs)  // a first run reads what an iteration without re-runs would
            if (!replay && !own_state(x) && version[static_cast<size_t>(x)] != latest[static_cast<size_t>(x)] && !one_step_old(x))
              problems.push_back(at + "op '" + op.name + "' reads tensor " + name(x) +
                                 " holding an older value: a re-run wrote it after its later writes");
          if (!replay) {
            std::vector<uint64_t>& v = read_first[c.op];
            for (TensorId x : op.inputs) v.push_back(version[static_cast<size_t>(x)]);
          }
          for (TensorId x : in) {
            const Held h = held[static_cast<size_t>(x)];
            if (h == Held::Absent) problems.push_back(at + "op '" + op.name + "' reads tensor " + name(x) + " while it is off the device");
            if (h == Held::Stale) problems.push_back(at + "op '" + op.name + "' reads tensor " + name(x) + " before it is back on the device");
          }
          for (size_t k = 0; k < op.outputs.size(); ++k) {
            const TensorId x = op.outputs[k];
            if (held[static_cast<size_t>(x)] == Held::Absent)
              problems.push_back(at + "op '" + op.name + "' writes tensor " + name(x) + " while it is off the device");
            held[static_cast<size_t>(x)] = Held::Current;
            if (!replay) {
              version[static_cast<size_t>(x)] = ++latest[static_cast<size_t>(x)];
              wrote_first[c.op].push_back(version[static_cast<size_t>(x)]);
              host[static_cast<size_t>(x)] = 0;
            } else {  // the same value again: as this op left it then (an in-place op after it re-applies itself)
              version[static_cast<size_t>(x)] = wrote_first[c.op][k];
            }
          }
          break;
        }
        case CmdKind::CopyOut:
          if (held[t] != Held::Current) problems.push_back(at + "copy-out of tensor " + name(c.tensor) + ", which is not current on the device");
          else {
            host[t] = 1;
            host_version[t] = version[t];
          }
          break;
        case CmdKind::HostCompute: {  // reads and writes host copies only
          const Op& op = g.op(c.op);
          for (TensorId x : op.inputs) {
            const auto xi = static_cast<size_t>(x);
            // a scratch (the foreach Adam's temporaries) is the host step's own memory, made within it
            if (g.tensor(x).kind == TensorKind::Workspace) continue;
            if (!host[xi]) problems.push_back(at + "host op '" + op.name + "' reads tensor " + name(x) + " without a current host copy");
            else if (host_version[xi] != latest[xi])
              problems.push_back(at + "host op '" + op.name + "' reads tensor " + name(x) + " holding an older value on the host");
          }
          for (TensorId x : op.outputs) {
            const auto xi = static_cast<size_t>(x);
            host[xi] = 1;
            host_version[xi] = ++latest[xi];
            host_written[xi] = 1;
          }
          break;
        }
        case CmdKind::CopyIn:
          if (held[t] == Held::Absent) problems.push_back(at + "copy-in of tensor " + name(c.tensor) + " into memory it does not hold");
          if (!host[t]) problems.push_back(at + "copy-in of tensor " + name(c.tensor) + " without a current host copy");
          held[t] = Held::Current;
          version[t] = host_version[t];
          break;
        default: break;
      }
    }
  };
  walk(p.setup, "setup");
  for (int it = 0; it < 2; ++it) {
    for (const Tensor& x : g.tensors())
      if (!x.persistent) seen[static_cast<size_t>(x.id)] = 0;
    read_first.clear();
    wrote_first.clear();
    walk(it == 0 && !p.first_iteration.empty() ? p.first_iteration : p.iteration, "iteration " + std::to_string(it));
  }
}

// The host step in time: a host op starts after the copy to the host of each tensor it reads has ended; a copy back
// starts after the host op that wrote the value has ended (with the delayed update, the previous iteration's);
// and the next iteration's first device use of a tensor copied back starts after that copy has ended.
void check_host_step_times(const Graph& g, const Program& p, const Trace& tr, const std::vector<const CopyRecord*>& copy_of,
                           const std::vector<const OpRecord*>& op_of, std::vector<std::string>& problems) {
  const std::vector<Command>& cmds = p.iteration;
  const int last = static_cast<int>(tr.iterations.size()) - 1;
  auto name = [&](TensorId t) { return "'" + g.tensor(t).name + "'"; };
  std::map<OpId, const OpRecord*> previous;  // host ops' records in the iteration before the last
  for (const OpRecord& r : tr.ops)
    if (r.iteration == last - 1 && p.host_stream(r.stream)) previous[r.op] = &r;
  auto writes = [&](const Command& c, TensorId t) {
    if (c.kind != CmdKind::HostCompute) return false;
    const Op& op = g.op(c.op);
    return std::count(op.outputs.begin(), op.outputs.end(), t) > 0;
  };
  std::vector<uint8_t> host_written(g.tensors().size(), 0);  // by a host op somewhere in the iteration
  for (const Command& c : cmds)
    if (c.kind == CmdKind::HostCompute)
      for (TensorId x : g.op(c.op).outputs) host_written[static_cast<size_t>(x)] = 1;
  for (size_t i = 0; i < cmds.size(); ++i) {
    const Command& c = cmds[i];
    if (c.kind == CmdKind::HostCompute && op_of[i]) {
      for (TensorId x : g.op(c.op).inputs)
        for (size_t q = i; q-- > 0;)
          if (cmds[q].kind == CmdKind::CopyOut && cmds[q].tensor == x) {
            if (copy_of[q] && copy_of[q]->end > op_of[i]->start)
              problems.push_back("host op '" + g.op(c.op).name + "' started before the copy of tensor " + name(x) + " to the host ended");
            break;
          }
    }
    if (c.kind != CmdKind::CopyIn || !copy_of[i]) continue;
    const OpRecord* step = nullptr;
    bool found = false;
    for (size_t q = i; q-- > 0 && !found;)
      if (writes(cmds[q], c.tensor)) found = true, step = op_of[q];
    for (size_t q = cmds.size(); q-- > i + 1 && !found;)  // the delayed update: the previous iteration's step
      if (writes(cmds[q], c.tensor)) {
        found = true;
        auto it = previous.find(cmds[q].op);
        step = it == previous.end() ? nullptr : it->second;
      }
    if (step && step->end > copy_of[i]->start)
      problems.push_back("the copy back of tensor " + name(c.tensor) + " started before host op '" + g.op(step->op).name + "' ended");
  }
  if (last < 1) return;  // the copy back at the end of one iteration against the next iteration's first use
  const std::vector<const CopyRecord*> before = match_copies(cmds, tr, last - 1);
  for (size_t i = 0; i < cmds.size(); ++i) {
    if (cmds[i].kind != CmdKind::CopyIn || !before[i] || !host_written[static_cast<size_t>(cmds[i].tensor)]) continue;
    for (size_t q = 0; q < cmds.size(); ++q)
      if (cmds[q].kind == CmdKind::Launch && touches(g, cmds[q], cmds[i].tensor)) {
        if (op_of[q] && op_of[q]->start < before[i]->end)
          problems.push_back("op '" + g.op(cmds[q].op).name + "' started before the copy back of tensor " +
                             name(cmds[i].tensor) + " in the iteration before ended");
        break;
      }
  }
}

// Part two: the last iteration's device times against the order the Program demands.
void check_times(const Graph& g, const Program& p, const Trace& tr, std::vector<std::string>& problems) {
  if (tr.oom || tr.iterations.empty()) return;
  const int last = static_cast<int>(tr.iterations.size()) - 1;
  // Each launch's record: an op launched more than once (recomputed) has one record per launch, in stream order.
  std::map<OpId, std::vector<const OpRecord*>> records;
  for (const OpRecord& r : tr.ops)
    if (r.iteration == last) records[r.op].push_back(&r);
  for (auto& [op, v] : records)
    std::stable_sort(v.begin(), v.end(), [](const OpRecord* a, const OpRecord* b) { return a->start < b->start; });
  std::vector<MemRecord> mem;
  for (const MemRecord& m : tr.mem)
    if (m.iteration == last) mem.push_back(m);

  // A one-iteration run's only iteration is the first, which Program::first_iteration may replace.
  const std::vector<Command>& cmds = last == 0 && !p.first_iteration.empty() ? p.first_iteration : p.iteration;
  // Per command: its copy record or op record; per Alloc/Free: its memory record.
  const std::vector<const CopyRecord*> copy_of = match_copies(cmds, tr, last);
  std::vector<const MemRecord*> mem_of(cmds.size(), nullptr);
  std::vector<const OpRecord*> op_of(cmds.size(), nullptr);
  std::map<OpId, size_t> launched;
  size_t m = 0;
  for (size_t i = 0; i < cmds.size(); ++i) {
    const Command& c = cmds[i];
    if ((c.kind == CmdKind::Alloc || c.kind == CmdKind::Free) && m < mem.size()) mem_of[i] = &mem[m++];
    if (c.kind == CmdKind::Launch || c.kind == CmdKind::HostCompute) {
      const size_t k = launched[c.op]++;
      auto it = records.find(c.op);
      if (it != records.end() && k < it->second.size()) op_of[i] = it->second[k];
    }
  }
  auto name = [&](TensorId t) { return "'" + g.tensor(t).name + "'"; };
  // Every launch starts after the launch that last wrote each tensor it reads (since the tensor's allocation)
  // has ended: the waits the lowering places for the DAG, and after a replay for the tensors it made again.
  std::map<TensorId, size_t> last_write;
  for (size_t q = 0; q < cmds.size(); ++q) {
    const Command& c = cmds[q];
    if (c.kind == CmdKind::Alloc) last_write.erase(c.tensor);
    if (c.kind != CmdKind::Launch && c.kind != CmdKind::HostCompute) continue;
    const Op& op = g.op(c.op);
    for (TensorId x : c.kind == CmdKind::Launch ? reads(g, c) : op.inputs) {
      auto w = last_write.find(x);
      if (w == last_write.end() || w->second == q || !op_of[q] || !op_of[w->second]) continue;
      if (op_of[q]->start < op_of[w->second]->end)
        problems.push_back("op '" + op.name + "' started before op '" + g.op(cmds[w->second].op).name +
                           "' finished writing tensor " + name(x));
    }
    for (TensorId x : op.outputs) last_write[x] = q;
  }
  // The device start of the first work touching tensor u at or after command j.
  auto first_use_from = [&](TensorId u, size_t j) -> const TimeNs* {
    for (size_t q = j; q < cmds.size(); ++q) {
      const Command& c = cmds[q];
      if (c.kind == CmdKind::Launch && touches(g, c, u)) return op_of[q] ? &op_of[q]->start : nullptr;
      if ((c.kind == CmdKind::CopyIn || c.kind == CmdKind::CopyOut) && c.tensor == u) return copy_of[q] ? &copy_of[q]->start : nullptr;
      if (c.kind == CmdKind::Free && c.tensor == u) return nullptr;
    }
    return nullptr;
  };
  check_host_step_times(g, p, tr, copy_of, op_of, problems);
  for (size_t i = 0; i < cmds.size(); ++i) {
    const Command& c = cmds[i];
    if (!copy_of[i]) continue;
    const CopyRecord& cr = *copy_of[i];
    if (c.kind == CmdKind::CopyIn) {
      for (size_t q = i + 1; q < cmds.size(); ++q)
        if (cmds[q].kind == CmdKind::Launch && touches(g, cmds[q], c.tensor)) {
          if (op_of[q] && op_of[q]->start < cr.end)
            problems.push_back("op '" + g.op(cmds[q].op).name + "' started before the copy-in of tensor " + name(c.tensor) + " ended");
          break;
        }
      continue;
    }
    for (size_t q = i; q-- > 0;)  // copy-out: after the last write before it
      if (cmds[q].kind == CmdKind::Launch) {
        const Op& op = g.op(cmds[q].op);
        if (!std::count(op.outputs.begin(), op.outputs.end(), c.tensor)) continue;
        if (op_of[q] && op_of[q]->end > cr.start)
          problems.push_back("the copy-out of tensor " + name(c.tensor) + " started before op '" + op.name + "' finished writing it");
        break;
      }
    size_t f = i + 1;  // then its memory: nothing may use what reuses the freed range before the copy ends
    while (f < cmds.size() && !(cmds[f].kind == CmdKind::Free && cmds[f].tensor == c.tensor)) ++f;
    if (f >= cmds.size() || !mem_of[f]) continue;
    const uint64_t lo = mem_of[f]->address, hi = lo + mem_of[f]->bytes;
    for (size_t q = f + 1; q < cmds.size(); ++q) {
      if (cmds[q].kind != CmdKind::Alloc || !mem_of[q]) continue;
      const MemRecord& a = *mem_of[q];
      if (a.address >= hi || a.address + a.bytes <= lo) continue;
      const TimeNs* use = first_use_from(cmds[q].tensor, q + 1);
      if (use && *use < cr.end)
        problems.push_back("tensor " + name(cmds[q].tensor) + " reuses the memory of tensor " + name(c.tensor) +
                           " before its copy-out ended");
    }
  }
}

}  // namespace

SwapCheck check_swapped_run(const Graph& g, const Program& p, const Trace& trace, uint64_t reported_pinned_bytes) {
  SwapCheck r;
  check_data(g, p, r.problems);
  check_times(g, p, trace, r.problems);
  std::set<TensorId> hosted;
  for (const auto* sec : {&p.setup, &p.iteration, &p.teardown})
    for (const Command& c : *sec)
      if (c.kind == CmdKind::CopyOut || c.kind == CmdKind::CopyIn) hosted.insert(c.tensor);
  for (TensorId t : hosted) r.host_bytes += g.tensor(t).bytes;
  if (r.host_bytes != reported_pinned_bytes)
    r.problems.push_back("pinned host bytes reported as " + std::to_string(reported_pinned_bytes) + ", the Program needs " +
                         std::to_string(r.host_bytes));
  return r;
}

}  // namespace dlsim
