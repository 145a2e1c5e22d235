#include "parallel/internal/trained_parameters.h"

#include <algorithm>
#include <limits>
#include <map>

#include "common/config_error.h"
#include "workloads/shape.h"

namespace dlsim::parallel::internal {

namespace {

bool is_update(const Op& o) {
  return o.phase == Phase::Optimizer && (o.kind == OpKind::AdamUpdate || o.kind == OpKind::SgdMomentumUpdate);
}

[[noreturn]] void bad(const std::string& message) { throw ConfigError("", 0, "parallel", message); }

}  // namespace

std::vector<TrainedParameter> trained_parameters(const Graph& g) {
  std::vector<TrainedParameter> params;
  std::map<TensorId, size_t> index;  // weight -> params
  for (const Op& o : g.ops()) {
    if (!is_update(o)) continue;
    TrainedParameter* cur = nullptr;
    for (TensorId t : o.inputs) {
      const Tensor& tt = g.tensor(t);
      if (tt.kind == TensorKind::Weight && tt.learnable) {
        if (index.count(t)) bad("parameter '" + tt.name + "' is updated by two optimizer ops");
        index[t] = params.size();
        params.push_back(TrainedParameter{});
        cur = &params.back();
        cur->weight = t;
        cur->update = o.id;
      } else if (cur == nullptr) {
        bad("optimizer op '" + o.name + "' reads '" + tt.name + "' before any parameter");
      } else if (tt.kind == TensorKind::Gradient && cur->grad == kNoTensor) {
        cur->grad = t;
      } else if (tt.kind == TensorKind::OptimizerState) {
        cur->states.push_back(t);
      } else if (tt.kind == TensorKind::Workspace && cur->foreach_sqrt == kNoTensor) {
        cur->foreach_sqrt = t;
      }
    }
  }
  if (params.empty()) bad("the training graph has no optimizer step whose state a data-parallel layout could split");
  for (const TrainedParameter& p : params)
    if (p.grad == kNoTensor) bad("the optimizer's update of '" + g.tensor(p.weight).name + "' reads no gradient");
  std::sort(params.begin(), params.end(), [](const auto& a, const auto& b) { return a.weight < b.weight; });
  index.clear();
  for (size_t i = 0; i < params.size(); ++i) index[params[i].weight] = i;
  std::map<TensorId, size_t> by_grad;
  for (size_t i = 0; i < params.size(); ++i) by_grad[params[i].grad] = i;
  for (const Op& o : g.ops()) {
    if (o.phase == Phase::Forward) {
      for (TensorId t : o.inputs) {
        auto it = index.find(t);
        if (it == index.end() || params[it->second].first_forward_use >= 0) continue;
        params[it->second].first_forward_use = o.id;
        params[it->second].block = o.block;
      }
    } else if (o.phase == Phase::Backward) {
      for (TensorId t : o.outputs) {
        auto it = by_grad.find(t);
        if (it != by_grad.end()) params[it->second].grad_ready = o.id;
      }
    }
  }
  for (TrainedParameter& p : params) {
    const Tensor& w = g.tensor(p.weight);
    p.model_parameter = ModelParameter{w.name, w.shape, to_string(w.dtype), static_cast<int64_t>(dtype_bytes(w.dtype)), ""};
  }
  return params;
}

std::vector<size_t> forward_use_order(const std::vector<TrainedParameter>& params) {
  std::vector<size_t> order(params.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto key = [&](size_t i) {
    return params[i].first_forward_use < 0 ? std::numeric_limits<OpId>::max() : params[i].first_forward_use;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  return order;
}

OpId first_optimizer_op(const Graph& g) {
  for (const Op& o : g.ops())
    if (o.phase == Phase::Optimizer) return o.id;
  return -1;
}

void replace_in_phase(Graph& g, Phase phase, TensorId from, TensorId to) {
  for (const Op& o : g.ops()) {
    if (o.phase != phase) continue;
    Op& m = g.op(o.id);
    std::replace(m.inputs.begin(), m.inputs.end(), from, to);
    std::replace(m.outputs.begin(), m.outputs.end(), from, to);
  }
}

void append_input(Graph& g, OpId op, TensorId t) { g.op(op).inputs.push_back(t); }
void append_output(Graph& g, OpId op, TensorId t) { g.op(op).outputs.push_back(t); }

TensorId add_tensor(RankLocalGraph& r, Tensor t, MemoryCategory c) {
  const TensorId id = r.graph.add_tensor(std::move(t));
  r.categories.push_back(c);
  return id;
}

void shard_states(Graph& g, const TrainedParameter& p, int64_t local_rows) {
  for (TensorId s : p.states) {
    Tensor& t = g.tensor(s);
    uint64_t row_elems = 1;
    for (size_t i = 1; i < t.shape.size(); ++i) row_elems *= static_cast<uint64_t>(t.shape[i]);
    if (t.shape.empty()) t.shape = {local_rows};
    else t.shape[0] = local_rows;
    t.bytes = static_cast<uint64_t>(local_rows) * row_elems * dtype_bytes(t.dtype);
  }
}

void rescale_optimizer_ops(Graph& g, const std::vector<TrainedParameter>& params) {
  std::map<TensorId, uint64_t> workspace_bytes;  // the foreach temporary: one element per state element
  for (const TrainedParameter& p : params) {
    const TensorId ws = g.op(p.update).workspace;
    if (ws == kNoTensor || p.states.empty()) continue;
    const Tensor& s = g.tensor(p.states.back());
    workspace_bytes[ws] += s.bytes / dtype_bytes(s.dtype) * dtype_bytes(g.tensor(ws).dtype);
  }
  for (const auto& [ws, bytes] : workspace_bytes) {
    Tensor& t = g.tensor(ws);
    t.bytes = bytes;
    t.shape = {static_cast<int64_t>(bytes / dtype_bytes(t.dtype))};
  }
  for (const TrainedParameter& p : params) {  // one temporary per parameter: its state's (local) elements
    if (p.foreach_sqrt == kNoTensor || p.states.empty()) continue;
    const Tensor& s = g.tensor(p.states.back());
    Tensor& t = g.tensor(p.foreach_sqrt);
    t.shape = s.shape;
    t.bytes = s.bytes / dtype_bytes(s.dtype) * dtype_bytes(t.dtype);
  }
  // An update's arithmetic is per element of its parameters' shards: the state's elements against the weight's.
  std::map<OpId, std::pair<double, double>> elements;  // update op -> (local, full)
  for (const TrainedParameter& p : params) {
    if (p.states.empty()) continue;
    const Tensor& s = g.tensor(p.states.back());
    auto& e = elements[p.update];
    e.first += static_cast<double>(s.bytes / dtype_bytes(s.dtype));
    e.second += static_cast<double>(numel(p.model_parameter.shape));
  }
  for (const Op& o : g.ops()) {
    if (o.phase != Phase::Optimizer) continue;
    Op& m = g.op(o.id);
    uint64_t read = 0, written = 0;
    // (not the foreach temporaries the updates name: a scratch, no traffic, as the synthesis counts them)
    for (TensorId t : m.inputs) read += g.tensor(t).kind == TensorKind::Workspace ? 0 : g.tensor(t).bytes;
    for (TensorId t : m.outputs) written += g.tensor(t).kind == TensorKind::Workspace ? 0 : g.tensor(t).bytes;
    auto it = elements.find(o.id);
    if (it != elements.end() && it->second.second > 0) m.flops *= it->second.first / it->second.second;
    else if (m.bytes_read > 0) m.flops *= static_cast<double>(read) / static_cast<double>(m.bytes_read);  // AMP's unscale
    m.bytes_read = read;
    m.bytes_written = written;
  }
}

}  // namespace dlsim::parallel::internal
