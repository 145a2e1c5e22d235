#include "program/first_iteration.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace dlsim {

namespace {

bool touches(const Graph& g, const Command& c, const std::vector<char>& in_group) {
  auto in = [&](TensorId t) { return t != kNoTensor && in_group[static_cast<size_t>(t)]; };
  const Op& op = g.op(c.op);
  for (TensorId t : c.replay ? g.replay_inputs(op) : op.inputs)
    if (in(t)) return true;
  for (TensorId t : op.outputs)
    if (in(t)) return true;
  return in(op.workspace);
}

}  // namespace

void allocate_at_first_use(Program& p, const Graph& g, const std::vector<FirstUse>& groups) {
  if (!p.first_iteration.empty()) throw std::invalid_argument("first iteration: the program already has one");
  const size_t nt = g.tensors().size(), no = g.ops().size();
  std::vector<int> group_of(nt, -1);
  for (size_t k = 0; k < groups.size(); ++k)
    for (TensorId t : groups[k].tensors) {
      if (t < 0 || static_cast<size_t>(t) >= nt) throw std::invalid_argument("first iteration: no tensor " + std::to_string(t));
      if (group_of[static_cast<size_t>(t)] >= 0)
        throw std::invalid_argument("first iteration: tensor '" + g.tensor(t).name + "' is in two groups");
      group_of[static_cast<size_t>(t)] = static_cast<int>(k);
    }
  std::vector<int> setup_stream(nt, -1);
  for (const Command& c : p.setup)
    if (c.kind == CmdKind::Alloc && c.tensor >= 0 && static_cast<size_t>(c.tensor) < nt) setup_stream[static_cast<size_t>(c.tensor)] = c.stream;
  // Left where the lowering put it: a tensor setup does not allocate (a host step's, on the host) and one the
  // iteration allocates, frees, copies or records itself (a swap plan's, whose first residency is the plan's).
  std::vector<char> movable(nt, 0);
  for (size_t t = 0; t < nt; ++t) movable[t] = group_of[t] >= 0 && setup_stream[t] >= 0;
  for (const Command& c : p.iteration)
    if (c.kind != CmdKind::Launch && c.tensor >= 0 && static_cast<size_t>(c.tensor) < nt) movable[static_cast<size_t>(c.tensor)] = 0;

  // Per group, the index of the first launch that is its use.
  std::vector<size_t> at(groups.size(), p.iteration.size());
  for (size_t k = 0; k < groups.size(); ++k) {
    std::vector<char> op_in(no, 0), tensor_in(nt, 0);
    for (OpId o : groups[k].ops)
      if (o >= 0 && static_cast<size_t>(o) < no) op_in[static_cast<size_t>(o)] = 1;
    for (TensorId t : groups[k].tensors) tensor_in[static_cast<size_t>(t)] = movable[static_cast<size_t>(t)];
    for (size_t i = 0; i < p.iteration.size(); ++i) {
      const Command& c = p.iteration[i];
      if (c.kind != CmdKind::Launch || c.op < 0 || static_cast<size_t>(c.op) >= no) continue;
      if (op_in[static_cast<size_t>(c.op)] || touches(g, c, tensor_in)) {
        at[k] = i;
        if (groups[k].before_op_allocations)
          while (at[k] > 0 && p.iteration[at[k] - 1].kind == CmdKind::Alloc) --at[k];
        break;
      }
    }
  }
  if (std::all_of(at.begin(), at.end(), [&](size_t i) { return i == p.iteration.size(); })) return;

  std::vector<char> deferred(nt, 0);
  for (size_t k = 0; k < groups.size(); ++k)
    if (at[k] < p.iteration.size())
      for (TensorId t : groups[k].tensors) deferred[static_cast<size_t>(t)] = movable[static_cast<size_t>(t)];
  if (std::find(deferred.begin(), deferred.end(), 1) == deferred.end()) return;
  std::vector<Command> setup;
  for (const Command& c : p.setup)
    if (!(c.kind == CmdKind::Alloc && c.tensor >= 0 && static_cast<size_t>(c.tensor) < nt && deferred[static_cast<size_t>(c.tensor)]))
      setup.push_back(c);
  p.setup = std::move(setup);
  p.first_iteration.reserve(p.iteration.size() + static_cast<size_t>(std::count(deferred.begin(), deferred.end(), 1)));
  for (size_t i = 0; i < p.iteration.size(); ++i) {
    for (size_t k = 0; k < groups.size(); ++k)
      if (at[k] == i)
        for (TensorId t : groups[k].tensors) {
          if (!deferred[static_cast<size_t>(t)]) continue;
          Command a;
          a.kind = CmdKind::Alloc;
          a.stream = static_cast<int16_t>(setup_stream[static_cast<size_t>(t)]);
          a.tensor = t;
          p.first_iteration.push_back(a);
        }
    p.first_iteration.push_back(p.iteration[i]);
  }
}

}  // namespace dlsim
