#include "parallel/internal/elide_casts.h"

#include <map>

namespace dlsim::parallel::internal {

namespace {

bool is_parameter_gradient(const Graph& g, TensorId t) {
  const Tensor& x = g.tensor(t);
  return x.kind == TensorKind::Gradient && x.grad_of != kNoTensor && g.tensor(x.grad_of).kind == TensorKind::Weight &&
         g.tensor(x.grad_of).learnable;
}

bool is_same_dtype_cast(const Graph& g, const Op& o) {
  if (o.kind != OpKind::Copy || !o.has_attr(Attr::cast) || o.attr(Attr::cast) == 0) return false;
  if (o.inputs.size() != 1 || o.outputs.size() != 1 || o.workspace != kNoTensor) return false;
  const Tensor& in = g.tensor(o.inputs[0]);
  const Tensor& out = g.tensor(o.outputs[0]);
  return in.dtype == out.dtype && in.shape == out.shape;
}

}  // namespace

size_t elide_same_dtype_casts(Graph& g) {
  // Which tensor stands for which: a dropped cast's output reads as its input, or its input as its output.
  std::map<TensorId, TensorId> alias;
  std::vector<bool> drop(g.ops().size(), false);
  auto resolve = [&alias](TensorId t) {
    for (auto it = alias.find(t); it != alias.end(); it = alias.find(t)) t = it->second;
    return t;
  };
  size_t dropped = 0;
  for (const Op& o : g.ops()) {
    if (!is_same_dtype_cast(g, o)) continue;
    const TensorId in = resolve(o.inputs[0]), out = o.outputs[0];
    if (in == out) continue;
    if (is_parameter_gradient(g, out) && !g.tensor(in).persistent) alias[in] = out;
    else alias[out] = in;
    drop[static_cast<size_t>(o.id)] = true;
    ++dropped;
  }
  if (dropped == 0) return 0;

  Graph ng;
  ng.name = g.name;
  ng.batch = g.batch;
  ng.blocks = g.blocks;
  for (const auto& [from, to] : g.replay_source) ng.replay_source[resolve(from)] = resolve(to);
  for (const Tensor& t : g.tensors()) ng.add_tensor(t);  // ids kept
  std::vector<OpId> renumbered(g.ops().size(), -1);
  for (const Op& o : g.ops()) {
    if (drop[static_cast<size_t>(o.id)]) continue;
    Op copy = o;
    for (TensorId& t : copy.inputs) t = resolve(t);
    for (TensorId& t : copy.outputs) t = resolve(t);
    if (copy.forward_op >= 0) copy.forward_op = renumbered[static_cast<size_t>(copy.forward_op)];
    renumbered[static_cast<size_t>(o.id)] = ng.add_op(std::move(copy));
  }
  g = std::move(ng);
  return dropped;
}

}  // namespace dlsim::parallel::internal
