#include "validate/gpu/internal/op_translation_helpers.h"

#include "common/config_error.h"
#include "workloads/shape.h"

namespace dlsim::validate_internal {

void fail(const Graph& g, const Op& op, const std::string& msg) {
  throw ConfigError("graph " + g.name, 0, op.name,
                    "cannot map op " + std::to_string(op.id) + " (" + to_string(op.kind) + ") to CUDA: " + msg);
}

int64_t numel(const Tensor& t) {
  return t.shape.empty() ? static_cast<int64_t>(t.bytes / dtype_bytes(t.dtype)) : dlsim::numel(t.shape);
}

Arg arg(const Graph& g, TensorId id) { return Arg{id, g.tensor(id).bytes, g.tensor(id).dtype}; }
Arg side(uint64_t bytes, DType d) { return Arg{kNoTensor, bytes, d}; }

std::vector<Arg> args_of(const Graph& g, const std::vector<TensorId>& ids) {
  std::vector<Arg> v;
  for (TensorId id : ids) v.push_back(arg(g, id));
  return v;
}

bool contains(const std::vector<TensorId>& v, TensorId id) {
  for (TensorId x : v)
    if (x == id) return true;
  return false;
}

TensorId find_shaped(const Graph& g, const std::vector<TensorId>& ids, const std::vector<int64_t>& shape,
                     const std::vector<TensorId>& exclude) {
  for (TensorId id : ids)
    if (!contains(exclude, id) && g.tensor(id).shape == shape) return id;
  return kNoTensor;
}

TensorId first_of_kind(const Graph& g, const std::vector<TensorId>& ids, TensorKind kind, size_t rank, int skip) {
  for (TensorId id : ids) {
    const Tensor& t = g.tensor(id);
    if (t.kind == kind && (rank == 0 || t.shape.size() == rank) && skip-- == 0) return id;
  }
  return kNoTensor;
}

const Op& forward_of(const Graph& g, const Op& op) {
  if (op.forward_op < 0 || static_cast<size_t>(op.forward_op) >= g.ops().size())
    fail(g, op, "a backward op without its forward op (forward_op = " + std::to_string(op.forward_op) + ")");
  return g.op(op.forward_op);
}

TensorId need_in(const Graph& g, const Op& op, size_t i) {
  if (op.inputs.size() <= i) fail(g, op, "expected at least " + std::to_string(i + 1) + " inputs");
  return op.inputs[i];
}
TensorId need_out(const Graph& g, const Op& op, size_t i) {
  if (op.outputs.size() <= i) fail(g, op, "expected at least " + std::to_string(i + 1) + " outputs");
  return op.outputs[i];
}
TensorId require(const Graph& g, const Op& op, TensorId id, const std::string& role) {
  if (id == kNoTensor) fail(g, op, "cannot find its " + role + " tensor");
  return id;
}

TensorId output_grad(const Graph& g, const Op& op, const Op& fwd, const std::vector<TensorId>& also_not) {
  std::vector<TensorId> exclude = also_not;
  exclude.insert(exclude.end(), fwd.inputs.begin(), fwd.inputs.end());
  exclude.insert(exclude.end(), fwd.outputs.begin(), fwd.outputs.end());
  return require(g, op, find_shaped(g, op.inputs, g.tensor(need_out(g, fwd, 0)).shape, exclude), "output gradient");
}

int64_t attr(const Graph& g, const Op& op, Attr a) {
  if (!op.has_attr(a)) fail(g, op, std::string("missing attribute '") + to_string(a) + "'");
  return op.attr(a);
}
int64_t attr(const Graph& g, const Op& op, Attr a, size_t index) {
  if (!op.has_attr(a, index)) fail(g, op, "missing attribute '" + stored_name(a, index) + "'");
  return op.attr(a, index);
}

std::vector<int64_t> dims4(const Tensor& t) {
  const auto& s = t.shape;
  if (s.size() == 4) return s;
  if (s.size() == 2) return {s[0], s[1], 1, 1};
  if (s.size() == 3) return {s[0], s[1], s[2], 1};
  return {1, numel(t), 1, 1};
}

DType same_dtype(const Graph& g, const Op& op, std::initializer_list<TensorId> ids) {
  DType d = g.tensor(*ids.begin()).dtype;
  for (TensorId id : ids)
    if (id != kNoTensor && g.tensor(id).dtype != d)
      fail(g, op, std::string("mixed data types in one library call (") + to_string(d) + " and " +
                      to_string(g.tensor(id).dtype) + " of '" + g.tensor(id).name + "')");
  return d;
}

void add_step(OpTranslation& kp, KernelCall call, KernelArgs args, int64_t elements) {
  KernelStep s;
  s.call = call;
  s.args = std::move(args);
  s.elements = elements;
  kp.steps.push_back(std::move(s));
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) st[i - 1] = st[i] * shape[i];
  return st;
}

NdMap broadcast_map(const Graph& g, const Op& op, const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  if (in == out) return {};
  if (in.size() > out.size() || out.size() > kMaxRank)
    fail(g, op, "cannot broadcast a rank-" + std::to_string(in.size()) + " operand to rank " + std::to_string(out.size()));
  NdMap m;
  const size_t lead = out.size() - in.size();
  const std::vector<int64_t> st = strides_of(in);
  for (size_t d = 0; d < out.size(); ++d) {
    const int64_t len = d < lead ? 1 : in[d - lead];
    if (len != out[d] && len != 1) fail(g, op, "operand does not broadcast to the output's shape");
    m.dims.push_back(out[d]);
    m.strides.push_back(len == 1 ? 0 : st[d - lead]);
    m.shift.push_back(0);
    m.bound.push_back(out[d]);
  }
  return m;
}

void set_rows(KernelStep& s, const Tensor& t) {
  s.cols = t.shape.empty() ? 1 : t.shape.back();
  s.rows = s.cols == 0 ? 0 : numel(t) / s.cols;
}

KernelStep step(KernelCall call, KernelArgs args, int64_t elements) {
  KernelStep s;
  s.call = call;
  s.args = std::move(args);
  s.elements = elements;
  return s;
}

KernelStep fill_zero(const Arg& out) { return step(KernelCall::Fill, {{}, {out}}, static_cast<int64_t>(out.bytes)); }

// A contiguous copy of all bytes, or a cast when the types differ (autocast's copies and their backward).
KernelStep copy_or_cast(const Graph& g, const Op& op, TensorId in, TensorId out) {
  const Tensor& a = g.tensor(in);
  const Tensor& b = g.tensor(out);
  if (numel(a) != numel(b)) fail(g, op, "copy between tensors of different element counts");
  if (a.dtype == b.dtype) {
    KernelStep s = step(KernelCall::Copy, {{arg(g, in)}, {arg(g, out)}});
    s.rows = 1, s.cols = static_cast<int64_t>(a.bytes), s.src_pitch = s.cols, s.dst_pitch = s.cols;
    return s;
  }
  const auto fp = [](DType d) { return d == DType::F32 || d == DType::BF16; };
  if (!fp(a.dtype) || !fp(b.dtype))
    fail(g, op, std::string("no cast kernel from ") + to_string(a.dtype) + " to " + to_string(b.dtype));
  KernelStep s = step(KernelCall::ElementwiseUnary, {{arg(g, in)}, {arg(g, out)}}, numel(b));
  s.fn = Pointwise::Cast;
  return s;
}

void start_ours(const Graph& g, const Op& op, OpTranslation& kp) {
  kp.lib = KernelLib::Ours;
  if (!op.outputs.empty()) kp.dtype = g.tensor(op.outputs[0]).dtype;
  else if (!op.inputs.empty()) kp.dtype = g.tensor(op.inputs[0]).dtype;
}

}  // namespace dlsim::validate_internal
