#include "workloads/internal/model_builder_helpers.h"

#include <algorithm>

#include "common/config_error.h"

namespace dlsim::workloads_internal {

DType wider(DType a, DType b) { return (a == DType::F32 || b == DType::F32) ? DType::F32 : a; }

[[noreturn]] void fail(const Graph& g, const std::string& layer, const std::string& msg) {
  throw ConfigError(g.name, 0, layer, msg);
}

TensorId new_tensor(Graph& g, const std::string& name, TensorKind kind, DType dt, std::vector<int64_t> shape,
                    bool persistent) {
  for (int64_t d : shape)
    if (d <= 0) fail(g, name, "tensor shape " + shape_str(shape) + " has a non-positive dimension");
  const std::optional<int64_t> n = checked_numel(shape);
  if (!n || static_cast<uint64_t>(*n) > kMaxTensorBytes / dtype_bytes(dt))
    fail(g, name, "tensor shape " + shape_str(shape) + " holds more than 2^50 bytes (1 PiB), dlsim's limit per "
                  "tensor: lower the batch, image_size or seq_len");
  Tensor t;
  t.name = name;
  t.kind = kind;
  t.dtype = dt;
  t.bytes = static_cast<uint64_t>(*n) * dtype_bytes(dt);
  t.shape = std::move(shape);
  t.persistent = persistent;
  return g.add_tensor(std::move(t));
}

int64_t checked_macs(const Graph& g, const std::string& op, std::initializer_list<int64_t> factors) {
  const std::optional<int64_t> macs = checked_product(factors);
  if (!macs) fail(g, op, "more than 2^63 multiply-accumulates: lower the batch, image_size or seq_len");
  return *macs;
}

namespace {

Op new_op(Graph& g, const std::string& name, OpKind kind, OtherOp other, std::vector<TensorId> in,
          std::vector<TensorId> out, double flops, const AttrValues& attrs) {
  Op o;
  o.name = name;
  o.kind = kind;
  o.other = other;
  o.phase = Phase::Forward;
  for (TensorId t : in) o.bytes_read += g.tensor(t).bytes;
  for (TensorId t : out) o.bytes_written += g.tensor(t).bytes;
  o.inputs = std::move(in);
  o.outputs = std::move(out);
  o.flops = flops;
  for (const auto& [a, v] : attrs) o.set_attr(a, v);
  return o;
}

}  // namespace

OpId emit(Graph& g, const std::string& name, OpKind kind, std::vector<TensorId> in, std::vector<TensorId> out,
          double flops, const AttrValues& attrs) {
  return g.add_op(new_op(g, name, kind, OtherOp::None, std::move(in), std::move(out), flops, attrs));
}

OpId emit_other(Graph& g, const std::string& name, OtherOp other, std::vector<TensorId> in, std::vector<TensorId> out,
                double flops, const AttrValues& attrs) {
  return g.add_op(new_op(g, name, OpKind::Other, other, std::move(in), std::move(out), flops, attrs));
}

const std::vector<int64_t>& shape_of(const Graph& g, TensorId t, const std::string& layer) {
  if (t < 0 || static_cast<size_t>(t) >= g.tensors().size()) fail(g, layer, "input tensor id " + std::to_string(t) + " does not exist");
  return g.tensor(t).shape;
}

const std::vector<int64_t>& shape4(const Graph& g, TensorId t, const std::string& layer) {
  const auto& s = shape_of(g, t, layer);
  if (s.size() != 4) fail(g, layer, "expects an NCHW input, got shape " + shape_str(s));
  return s;
}

bool layer_sizes_ok(std::initializer_list<int64_t> positive, std::initializer_list<int64_t> non_negative) {
  for (int64_t v : positive)
    if (v <= 0 || v > kMaxLayerSize) return false;
  for (int64_t v : non_negative)
    if (v < 0 || v > kMaxLayerSize) return false;
  return true;
}

int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode) {
  int64_t num = in + 2 * p - k;
  int64_t out = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

std::vector<int64_t> broadcast(const Graph& g, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                               const std::string& layer) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> r(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) fail(g, layer, "shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    r[i] = std::max(da, db);
  }
  return r;
}

}  // namespace dlsim::workloads_internal
