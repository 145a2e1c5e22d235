#include "policies/swap/core/host_step.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "workloads/shape.h"

namespace dlsim {

HostStepTensors host_step_tensors(const Graph& g, const std::vector<OpId>& order, const HostStep& step) {
  const size_t nt = g.tensors().size(), no = g.ops().size();
  HostStepTensors h;
  h.host_op.assign(no, 0);
  h.host_only.assign(nt, 0);
  h.to_host_after.assign(nt, -1);
  h.from_host.assign(nt, 0);
  for (OpId o : step.ops) {
    if (o < 0 || static_cast<size_t>(o) >= no) throw std::invalid_argument("host step: op " + std::to_string(o) + " is not in the graph");
    const Op& op = g.op(o);
    if (op.phase != Phase::Optimizer)
      throw std::invalid_argument("host step: op '" + op.name + "' is not an optimizer op: only the optimizer step runs on the CPU");
    if (h.host_op[static_cast<size_t>(o)]) throw std::invalid_argument("host step: op '" + op.name + "' is listed twice");
    for (TensorId t : op.outputs)  // (a scratch it writes, the foreach Adam's temporaries, is host memory)
      if (!g.tensor(t).persistent && g.tensor(t).kind != TensorKind::Workspace)
        throw std::invalid_argument("host step: op '" + op.name + "' writes tensor '" + g.tensor(t).name +
                                    "', which is not persistent (only persistent state is updated on the host)");
    h.host_op[static_cast<size_t>(o)] = 1;
  }
  // The last device use (position) of each tensor, and which tensors host ops touch.
  std::vector<int> last_device(nt, -1);
  std::vector<uint8_t> host_touch(nt, 0);
  std::vector<int> first_host_read(nt, -1);  // the position of the first host op reading each tensor
  for (size_t i = 0; i < order.size(); ++i) {
    const Op& op = g.op(order[i]);
    const int pos = static_cast<int>(i);
    auto touch = [&](TensorId t) {
      const auto ti = static_cast<size_t>(t);
      if (h.host_op[static_cast<size_t>(op.id)]) {
        host_touch[ti] = 1;
        return;
      }
      last_device[ti] = pos;
    };
    if (h.host_op[static_cast<size_t>(op.id)])
      for (TensorId t : op.inputs)
        if (first_host_read[static_cast<size_t>(t)] < 0) first_host_read[static_cast<size_t>(t)] = pos;
    for (TensorId t : op.inputs) touch(t);
    for (TensorId t : op.outputs) touch(t);
  }
  size_t found = 0;
  for (OpId o : order) found += h.host_op[static_cast<size_t>(o)];
  if (found != step.ops.size()) throw std::invalid_argument("host step: an op it names is not in the issue order");

  for (const Tensor& t : g.tensors()) {
    const auto ti = static_cast<size_t>(t.id);
    if (!host_touch[ti]) continue;
    if (t.kind == TensorKind::Workspace && last_device[ti] < 0) continue;  // a host op's scratch: host memory
    if (t.persistent && last_device[ti] < 0) {
      h.host_only[ti] = 1;
      continue;
    }
    if (!t.persistent) {  // read by a host op: streamed out after its last device use
      if (last_device[ti] < 0)
        throw std::invalid_argument("host step: tensor '" + t.name + "' is read on the host but never made on the device");
      // a schedule may start the step of one parameter before another's backward (eager per-parameter steps
      // under a reordering concurrency policy): each gradient only has to be done before the step that reads it
      if (last_device[ti] > first_host_read[ti])
        throw std::invalid_argument("host step: tensor '" + t.name + "' is used on the device after a host op reads it");
      h.to_host_after[ti] = last_device[ti];
      h.to_host.push_back(t.id);
    }
  }
  for (OpId o : step.ops)
    for (TensorId t : g.op(o).outputs) {
      const auto ti = static_cast<size_t>(t);
      if (h.host_only[ti] || h.from_host[ti] || g.tensor(t).kind == TensorKind::Workspace) continue;
      h.from_host[ti] = 1;
      h.written_back.push_back(t);
    }
  std::sort(h.written_back.begin(), h.written_back.end());
  uint64_t state_elems = 0;
  for (const Tensor& t : g.tensors())
    if (h.host_only[static_cast<size_t>(t.id)]) state_elems += static_cast<uint64_t>(numel(t.shape));
  for (TensorId t : h.written_back) h.parameters += numel(g.tensor(t).shape);
  const auto params = static_cast<uint64_t>(h.parameters);
  h.host_update_bytes = 4 * (params + state_elems);
  h.host_state_bytes = h.host_update_bytes + 4 * params;
  return h;
}

std::vector<ParameterFetch> parameter_fetches(const Graph& g, const std::vector<OpId>& order, const SwapPlan& plan,
                                              const HostStepTensors& h) {
  std::vector<ParameterFetch> out;
  if (!plan.host_step.fetch_parameters) return out;
  const int ahead = std::max(plan.host_step.prefetch_ops, 0);
  std::vector<int> pos_of(g.ops().size(), -1);
  for (size_t i = 0; i < order.size(); ++i) pos_of[static_cast<size_t>(order[i])] = static_cast<int>(i);
  for (TensorId w : h.written_back) {
    std::vector<int> uses;
    for (size_t i = 0; i < order.size(); ++i) {
      const Op& op = g.op(order[i]);
      if (h.host_op[static_cast<size_t>(op.id)]) continue;
      if (std::count(op.inputs.begin(), op.inputs.end(), w) || std::count(op.outputs.begin(), op.outputs.end(), w))
        uses.push_back(static_cast<int>(i));
    }
    for (const Recomputation& rc : plan.recomputations)
      for (OpId o : rc.ops)
        if (o >= 0 && static_cast<size_t>(o) < g.ops().size() && std::count(g.op(o).inputs.begin(), g.op(o).inputs.end(), w) &&
            rc.before >= 0 && static_cast<size_t>(rc.before) < order.size())
          uses.push_back(rc.before);
    std::sort(uses.begin(), uses.end());
    uses.erase(std::unique(uses.begin(), uses.end()), uses.end());
    auto forward = [&](int pos) { return g.op(order[static_cast<size_t>(pos)]).phase == Phase::Forward; };
    const size_t start = out.size();
    for (int u : uses) {
      if (out.size() > start) {
        ParameterFetch& cur = out.back();
        if (forward(u) == forward(cur.last) || u <= cur.last + 1 + ahead) {
          cur.last = u;
          continue;
        }
      }
      const int prev = out.size() > start ? out.back().last : -1;
      out.push_back({w, std::max(prev, u - 1 - ahead), u, u});
    }
  }
  std::sort(out.begin(), out.end(), [](const ParameterFetch& a, const ParameterFetch& b) {
    return a.issue_after != b.issue_after ? a.issue_after < b.issue_after : a.tensor < b.tensor;
  });
  return out;
}

TimeNs host_step_ns(const Graph& g, const Op& op, double adam_bytes_per_s) {
  if (!(adam_bytes_per_s > 0)) throw std::invalid_argument("host step: the CPU's Adam rate is not known");
  double elems = 0;
  // Every output that the step keeps, master weight and each state tensor; not the foreach step's temporaries (a
  // group's first update writes the whole group's): CPU Adam's published rate is per parameter and state.
  for (TensorId t : op.outputs)
    if (g.tensor(t).kind != TensorKind::Workspace) elems += static_cast<double>(numel(g.tensor(t).shape));
  const double ns = 4.0 * elems / adam_bytes_per_s * 1e9;
  if (!(ns < static_cast<double>(std::numeric_limits<TimeNs>::max() / 4)))
    throw std::invalid_argument("host step: op '" + op.name + "' would take longer than the clock can count");
  return static_cast<TimeNs>(std::llround(ns));
}

}  // namespace dlsim
