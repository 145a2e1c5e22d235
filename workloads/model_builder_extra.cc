// ModelBuilder ops the transformer builders need beyond the core set (declared in model_builder.h).
// Both are OpKind::Other because graph.h has no dedicated kind; attrs say which op it is so that a cost model
// or a backend can tell them apart. training.cc's generic rule for Other (the backward reads the inputs and
// the output) over-approximates what autograd keeps for them (select keeps nothing, tanh its output); BERT
// uses them only on the pooler, whose output no loss reads, so no backward is synthesised for them at all.

#include "common/config_error.h"
#include "workloads/model_builder.h"

namespace dlsim {
namespace {

TensorId activation(Graph& g, const std::string& name, DType dt, std::vector<int64_t> shape) {
  Tensor t;
  t.name = name;
  t.kind = TensorKind::Activation;
  t.dtype = dt;
  t.bytes = static_cast<uint64_t>(numel(shape)) * dtype_bytes(dt);
  t.shape = std::move(shape);
  return g.add_tensor(std::move(t));
}

void emit_other(Graph& g, const std::string& name, TensorId x, TensorId y, double flops, Attrs attrs) {
  Op o;
  o.name = name;
  o.kind = OpKind::Other;
  o.phase = Phase::Forward;
  o.inputs = {x};
  o.outputs = {y};
  o.bytes_read = g.tensor(x).bytes;
  o.bytes_written = g.tensor(y).bytes;
  o.flops = flops;
  o.attrs = std::move(attrs);
  g.add_op(std::move(o));
}

}  // namespace

TensorId ModelBuilder::select(TensorId x, int64_t axis, int64_t index, const std::string& name) {
  std::string n = auto_name("select", name);
  if (x < 0 || static_cast<size_t>(x) >= g_.tensors().size())
    throw ConfigError(g_.name, 0, n, "input tensor id " + std::to_string(x) + " does not exist");
  std::vector<int64_t> s = g_.tensor(x).shape;
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t ax = axis < 0 ? axis + rank : axis;
  if (rank < 2 || ax < 0 || ax >= rank)
    throw ConfigError(g_.name, 0, n, "select axis " + std::to_string(axis) + " is out of range for shape " + shape_str(s));
  int64_t len = s[static_cast<size_t>(ax)];
  if (index < -len || index >= len)
    throw ConfigError(g_.name, 0, n, "select index " + std::to_string(index) + " is out of range for shape " + shape_str(s));
  s.erase(s.begin() + ax);
  TensorId y = activation(g_, n + ".out", g_.tensor(x).dtype, s);
  Attrs a;
  a.set("select", 1);
  a.set("axis", ax);
  a.set("index", index < 0 ? index + len : index);
  emit_other(g_, n, x, y, 0, a);
  return y;
}

TensorId ModelBuilder::tanh(TensorId x, const std::string& name) {
  std::string n = auto_name("tanh", name);
  if (x < 0 || static_cast<size_t>(x) >= g_.tensors().size())
    throw ConfigError(g_.name, 0, n, "input tensor id " + std::to_string(x) + " does not exist");
  const Tensor& t = g_.tensor(x);
  std::vector<int64_t> s = t.shape;
  DType dt = t.dtype;
  double elems = static_cast<double>(numel(s));
  TensorId y = activation(g_, n + ".out", dt, s);
  Attrs a;
  a.set("tanh", 1);
  emit_other(g_, n, x, y, elems, a);
  return y;
}

}  // namespace dlsim
