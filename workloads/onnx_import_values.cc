// The ONNX importer's value plumbing: constant folding of the shape arithmetic exporters write (Shape,
// Gather, Unsqueeze, Concat, Slice, ...), and the ops that only move or re-view activations (Reshape,
// Transpose, Gather, Split, Expand). Layers are in onnx_import_ops.cc.
#ifdef DLSIM_WITH_ONNX
#include <algorithm>
#include <cmath>
#include <limits>

#include "workloads/internal/onnx_importer.h"

namespace dlsim::workloads_internal::values {

using onnx::NodeProto;
using Kind = Value::Kind;

Value constant_of(std::vector<int64_t> shape, std::vector<double> data, bool integer) {
  Value v;
  v.kind = Kind::Constant;
  v.shape = std::move(shape);
  v.data = std::move(data);
  v.integer = integer;
  return v;
}

int64_t norm_axis(Importer& im, const NodeProto& n, int64_t axis, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r) im.fail(n, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return a;
}

// Integers of a value; saturated, as exporters write INT64_MAX for "to the end" (not exact as a double).
std::vector<int64_t> ints_of(const Value& v) {
  std::vector<int64_t> r;
  for (double d : v.data) {
    if (d >= 9.2e18) r.push_back(std::numeric_limits<int64_t>::max());
    else if (d <= -9.2e18) r.push_back(std::numeric_limits<int64_t>::min());
    else r.push_back(static_cast<int64_t>(d));
  }
  return r;
}

// Axes of Unsqueeze/Squeeze/ReduceMean: an attribute up to opset 12, an input from 13.
std::vector<int64_t> axes_of(Importer& im, const NodeProto& n) {
  if (im.has_input(n, 1)) return ints_of(im.constant(n, 1));
  return attr_ints(n, "axes", {});
}

double apply(const std::string& op, double a, double b) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") return b == 0 ? NAN : a / b;
  if (op == "Equal") return a == b;
  if (op == "Pow") return std::pow(a, b);
  return a;  // unreachable: callers pass the ops above
}

Value fold_binary(Importer& im, const NodeProto& n, const Value& a, const Value& b) {
  size_t rank = std::max(a.shape.size(), b.shape.size());
  std::vector<int64_t> shape(rank);
  auto dim = [&](const Value& v, size_t i) { return i < rank - v.shape.size() ? 1 : v.shape[i - (rank - v.shape.size())]; };
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = dim(a, i), db = dim(b, i);
    if (da != db && da != 1 && db != 1) im.fail(n, "constant operands do not broadcast");
    shape[i] = std::max(da, db);
  }
  int64_t total = numel(shape);
  std::vector<double> out(static_cast<size_t>(total));
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rem = flat, ia = 0, ib = 0, sa = 1, sb = 1;
    for (size_t i = rank; i-- > 0;) {
      int64_t idx = rem % shape[i];
      rem /= shape[i];
      int64_t da = dim(a, i), db = dim(b, i);
      ia += (da == 1 ? 0 : idx) * sa;
      ib += (db == 1 ? 0 : idx) * sb;
      sa *= da;
      sb *= db;
    }
    double r = apply(n.op_type(), a.data[static_cast<size_t>(ia)], b.data[static_cast<size_t>(ib)]);
    if (a.integer && b.integer && n.op_type() == "Div") r = std::floor(r);
    out[static_cast<size_t>(flat)] = r;
  }
  return constant_of(shape, out, (a.integer && b.integer) || n.op_type() == "Equal");
}

void concat(Importer& im, const NodeProto& n) {
  bool all_const = true;
  for (int i = 0; i < n.input_size(); ++i) all_const &= im.is_constant(n, i);
  int64_t axis = attr_int(n, "axis", 0);
  if (!all_const) {
    std::vector<TensorId> xs;
    for (int i = 0; i < n.input_size(); ++i) xs.push_back(im.activation(n, i));
    return im.set_activation(n, 0, im.builder().concat(xs, axis, im.layer_name(n)));
  }
  Value out = constant_of({0}, {}, true);
  for (int i = 0; i < n.input_size(); ++i) {
    const Value& v = im.constant(n, i);
    if (v.shape.size() > 1 || (axis != 0 && axis != -1)) im.fail(n, "folding Concat of constants of rank > 1 is not supported (input " + n.input(i) + " rank " + std::to_string(v.shape.size()) + ")");
    out.data.insert(out.data.end(), v.data.begin(), v.data.end());
    out.integer &= v.integer;
  }
  out.shape = {static_cast<int64_t>(out.data.size())};
  im.set(n, 0, out);
}

void reshape(Importer& im, const NodeProto& n) {
  std::vector<int64_t> target = ints_of(im.constant(n, 1));
  if (im.is_constant(n, 0)) {
    Value v = im.constant(n, 0);
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < target.size(); ++i) {
      if (target[i] == 0 && i < v.shape.size()) target[i] = v.shape[i];
      if (target[i] == -1) infer = static_cast<int64_t>(i);
      else known *= target[i];
    }
    if (infer >= 0 && known > 0) target[static_cast<size_t>(infer)] = numel(v.shape) / known;
    if (numel(target) != numel(v.shape)) im.fail(n, "cannot reshape a constant of " + std::to_string(numel(v.shape)) + " elements");
    v.kind = Kind::Constant;
    v.shape = target;
    return im.set(n, 0, v);
  }
  if (!im.value(n, 0).parts.empty()) {  // the parts of a split projection: each keeps its own last axis
    Value v = im.value(n, 0);
    for (TensorId& p : v.parts) {
      std::vector<int64_t> t = target;
      const auto& ps = im.builder().graph().tensor(p).shape;
      if (t.empty()) im.fail(n, "cannot reshape a split projection to a scalar");
      t.back() = ps.back();
      for (size_t i = 0; i + 1 < t.size(); ++i)
        if (t[i] == 0 && i < ps.size()) t[i] = ps[i];
      p = im.builder().reshape(p, t, im.layer_name(n) + ".part");
    }
    return im.set(n, 0, v);
  }
  TensorId x = im.activation(n, 0);
  const auto& s = im.builder().graph().tensor(x).shape;
  bool allowzero = attr_int(n, "allowzero", 0) != 0;
  for (size_t i = 0; i < target.size(); ++i)
    if (target[i] == 0 && !allowzero) {
      if (i >= s.size()) im.fail(n, "target dimension 0 copies a dimension the input does not have");
      target[i] = s[i];
    }
  im.set_activation(n, 0, im.builder().reshape(x, target, im.layer_name(n)));
}

void transpose(Importer& im, const NodeProto& n) {
  const Value& v = im.value(n, 0);
  // A graph input with every dimension static is a weight (export_params=False); the data batch has a
  // symbolic batch axis.
  bool static_input = v.kind == Kind::GraphInput && v.shape_known && v.shape.size() == 2 && v.shape[0] > 0 && v.shape[1] > 0;
  if (v.kind == Kind::Param || static_input) {
    Value w = im.param(n, 0);  // W^T of a 2-D weight: MatMul(x, W^T) is a linear layer
    if (w.shape.size() != 2) im.fail(n, "only 2-D weights can be transposed");
    std::swap(w.shape[0], w.shape[1]);
    w.data.clear();
    return im.set(n, 0, w);
  }
  TensorId x = im.activation(n, 0);
  size_t rank = im.builder().graph().tensor(x).shape.size();
  std::vector<int64_t> perm = attr_ints(n, "perm", {});
  if (perm.empty())
    for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  im.set_activation(n, 0, im.builder().transpose(x, perm, im.layer_name(n)));
}

void gather(Importer& im, const NodeProto& n) {
  int64_t axis = attr_int(n, "axis", 0);
  const Value& data = im.value(n, 0);
  if (im.is_constant(n, 0) && im.is_constant(n, 1) && data.shape.size() == 1) {
    Value out = constant_of(im.constant(n, 1).shape, {}, data.integer);
    for (int64_t i : ints_of(im.constant(n, 1))) {
      int64_t len = data.shape[0], j = i < 0 ? i + len : i;
      if (j < 0 || j >= len) im.fail(n, "index out of range");
      out.data.push_back(data.data[static_cast<size_t>(j)]);
    }
    return im.set(n, 0, out);
  }
  if ((data.kind == Kind::Param || data.kind == Kind::GraphInput) && axis == 0) {  // an embedding lookup
    const Value& table = im.param(n, 0);
    if (table.shape.size() != 2) im.fail(n, "an embedding table must be a matrix");
    TensorId ids = im.activation(n, 1);
    TensorId y = im.builder().embedding(ids, table.shape[0], table.shape[1], im.layer_name(n));
    im.remember_weight(table, im.builder().graph().ops().back().inputs.at(1));
    return im.set_activation(n, 0, y);
  }
  if (data.kind == Kind::Activation && im.is_constant(n, 1) && im.constant(n, 1).shape.empty())
    return im.set_activation(n, 0, im.builder().select(data.tensor, axis, ints_of(im.constant(n, 1)).at(0), im.layer_name(n)));
  im.fail(n, "only embedding lookups, a scalar index of an activation, and constant indexing are supported");
}

void shape(Importer& im, const NodeProto& n) {
  const Value& v = im.value(n, 0);
  std::vector<int64_t> s;
  if (v.kind == Kind::Activation) s = im.builder().graph().tensor(v.tensor).shape;
  else if (v.kind == Kind::GraphInput && (v.batch_axis || !v.shape_known)) s = im.builder().graph().tensor(im.activation(n, 0)).shape;
  else s = v.shape;  // constants, weights, buffers
  std::vector<double> d(s.begin(), s.end());
  int64_t r = static_cast<int64_t>(s.size()), start = attr_int(n, "start", 0), end = attr_int(n, "end", r);
  start = std::clamp(start < 0 ? start + r : start, int64_t{0}, r);
  end = std::clamp(end < 0 ? end + r : end, int64_t{0}, r);
  im.set(n, 0, constant_of({std::max<int64_t>(0, end - start)}, std::vector<double>(d.begin() + start, d.begin() + std::max(start, end)), true));
}

void unsqueeze_squeeze(Importer& im, const NodeProto& n) {
  std::vector<int64_t> axes = axes_of(im, n);
  bool unsq = n.op_type() == "Unsqueeze";
  if (im.is_constant(n, 0)) {
    Value v = im.constant(n, 0);
    if (unsq) {
      size_t rank = v.shape.size() + axes.size();
      std::vector<int64_t> s;
      std::vector<bool> ins(rank, false);
      for (int64_t a : axes) ins.at(static_cast<size_t>(norm_axis(im, n, a, rank))) = true;
      for (size_t i = 0, j = 0; i < rank; ++i) s.push_back(ins[i] ? 1 : v.shape.at(j++));
      v.shape = s;
    } else {
      std::vector<int64_t> s;
      for (int64_t d : v.shape)
        if (d != 1) s.push_back(d);
      v.shape = s;
    }
    return im.set(n, 0, v);
  }
  TensorId x = im.activation(n, 0);
  std::vector<int64_t> s = im.builder().graph().tensor(x).shape;
  if (unsq) {
    size_t rank = s.size() + axes.size();
    std::vector<bool> ins(rank, false);
    for (int64_t a : axes) ins.at(static_cast<size_t>(norm_axis(im, n, a, rank))) = true;
    std::vector<int64_t> o;
    for (size_t i = 0, j = 0; i < rank; ++i) o.push_back(ins[i] ? 1 : s.at(j++));
    s = o;
  } else {
    std::vector<bool> drop(s.size(), axes.empty());
    for (int64_t a : axes) drop.at(static_cast<size_t>(norm_axis(im, n, a, s.size()))) = true;
    std::vector<int64_t> o;
    for (size_t i = 0; i < s.size(); ++i)
      if (!(drop[i] && s[i] == 1)) o.push_back(s[i]);
    s = o;
  }
  im.set_activation(n, 0, im.builder().reshape(x, s, im.layer_name(n)));
}

// Slice of a known value (shape arithmetic, position ids) or of a graph input whose values are not needed
// (a buffer of ids sliced to the sequence length: only its shape matters).
void slice(Importer& im, const NodeProto& n) {
  Value v = im.value(n, 0);
  if (v.kind == Kind::Activation) v.shape = im.builder().graph().tensor(v.tensor).shape;
  else if (v.kind != Kind::Constant && v.kind != Kind::GraphInput) im.fail(n, "slicing a weight is not supported");
  if (v.kind == Kind::GraphInput && !v.shape_known) im.fail(n, "graph input '" + n.input(0) + "' has no shape");
  std::vector<int64_t> starts = ints_of(im.constant(n, 1)), ends = ints_of(im.constant(n, 2));
  std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  if (im.has_input(n, 3)) axes = ints_of(im.constant(n, 3));
  if (im.has_input(n, 4)) steps = ints_of(im.constant(n, 4));
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    im.fail(n, "starts, ends, axes and steps differ in length");
  std::vector<int64_t> begin(v.shape.size(), 0), shape = v.shape;
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t a = static_cast<size_t>(norm_axis(im, n, axes[i], v.shape.size()));
    int64_t len = v.shape[a];
    if (steps[i] != 1) im.fail(n, "only step 1 is supported");
    int64_t b = std::clamp(starts[i] < 0 ? starts[i] + len : starts[i], int64_t{0}, len);
    int64_t e = std::clamp(ends[i] < 0 ? ends[i] + len : ends[i], int64_t{0}, len);
    begin[a] = b;
    shape[a] = std::max<int64_t>(0, e - b);
  }
  if (v.kind == Kind::Activation) {
    // A contiguous slice of an activation (GPT-2's shifted logits) is a copy that keeps nothing for the
    // backward, whose gradient is the zero-padded output gradient: a Pad with negative (cropping) pads.
    size_t r = shape.size();
    std::vector<int64_t> pads(2 * r, 0);
    for (size_t d = 0; d < r; ++d) {
      pads[d] = -begin[d];
      pads[d + r] = -(v.shape[d] - begin[d] - shape[d]);
    }
    return im.set_activation(n, 0, im.builder().pad(v.tensor, pads, im.layer_name(n)));
  }
  Value out = v;
  out.shape = shape;
  if (v.kind == Kind::GraphInput) {
    out.batch_axis = false;  // a slice of a buffer, not the data batch
    return im.set(n, 0, out);
  }
  out.data.clear();
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t flat = 0; flat < numel(shape); ++flat) {
    int64_t rem = flat, src = 0, stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      idx[d] = rem % shape[d];
      rem /= shape[d];
      src += (idx[d] + begin[d]) * stride;
      stride *= v.shape[d];
    }
    out.data.push_back(v.data.at(static_cast<size_t>(src)));
  }
  im.set(n, 0, out);
}

void split(Importer& im, const NodeProto& n) {
  const Value& v = im.value(n, 0);
  if (v.parts.empty()) im.fail(n, "Split is supported only on a projection split into parts (a fused Q/K/V linear layer)");
  if (static_cast<int>(v.parts.size()) != n.output_size()) im.fail(n, "the number of outputs differs from the projection's parts");
  int64_t rank = static_cast<int64_t>(im.builder().graph().tensor(v.parts[0]).shape.size());
  if (norm_axis(im, n, attr_int(n, "axis", 0), static_cast<size_t>(rank)) != rank - 1) im.fail(n, "only a split of the last axis is supported");
  for (int i = 0; i < n.output_size(); ++i) im.set_activation(n, i, v.parts[static_cast<size_t>(i)]);
}

void constant_of_shape(Importer& im, const NodeProto& n) {
  std::vector<int64_t> shape = ints_of(im.constant(n, 0));
  double fill = 0;
  bool integer = false;
  for (const auto& a : n.attribute())
    if (a.name() == "value") {
      Value v = tensor_value(a.t(), "", im.layer_name(n));
      if (v.data.size() != 1) im.fail(n, "value must hold one element");
      fill = v.data[0];
      integer = v.integer;
    }
  if (numel(shape) > (1 << 22)) im.fail(n, "constant of " + std::to_string(numel(shape)) + " elements is too large to fold");
  im.set(n, 0, constant_of(shape, std::vector<double>(static_cast<size_t>(numel(shape)), fill), integer));
}

// Where over known values of one shape (scalars broadcast): the exporter's Expand-shape arithmetic.
void where(Importer& im, const NodeProto& n) {
  if (im.value(n, 1).kind == Kind::Activation && !im.is_constant(n, 0) && im.is_constant(n, 2)) {
    // where(mask, x, -inf-ish): GPT-2's causal mask. Like an additive mask it keeps no activation: an Add of
    // the (non-learnable) condition, as the zoo's GPT-2 builds it.
    TensorId cond = im.activation(n, 0);
    return im.set_activation(n, 0, im.builder().add(im.activation(n, 1), cond, false, im.layer_name(n)));
  }
  const Value &c = im.constant(n, 0), &a = im.constant(n, 1), &b = im.constant(n, 2);
  std::vector<int64_t> shape = c.shape;
  for (const Value* v : {&a, &b})
    if (numel(v->shape) != 1 && v->shape != shape) im.fail(n, "folding Where needs operands of one shape or scalars");
  auto at = [](const Value& v, size_t i) { return v.data.size() == 1 ? v.data[0] : v.data[i]; };
  Value out = constant_of(shape, {}, a.integer && b.integer);
  for (size_t i = 0; i < static_cast<size_t>(numel(shape)); ++i) out.data.push_back(at(c, i) != 0 ? at(a, i) : at(b, i));
  im.set(n, 0, out);
}

// Expand of ids whose values are not needed (token types): the broadcast shape only.
void expand(Importer& im, const NodeProto& n) {
  Value v = im.value(n, 0);
  if (v.kind != Kind::GraphInput) im.fail(n, "only expanding a graph input (ids) is supported");
  std::vector<int64_t> target = ints_of(im.constant(n, 1));
  size_t rank = std::max(target.size(), v.shape.size());
  std::vector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < rank - v.shape.size() ? 1 : v.shape[i - (rank - v.shape.size())];
    int64_t b = i < rank - target.size() ? 1 : target[i - (rank - target.size())];
    if (a != b && a != 1 && b != 1) im.fail(n, "shapes do not broadcast");
    shape[i] = std::max(a, b);
  }
  v.shape = shape;
  v.batch_axis = false;  // the target already holds the experiment's batch
  im.set(n, 0, v);
}

void constant(Importer& im, const NodeProto& n) {
  for (const auto& a : n.attribute()) {
    if (a.name() == "value") return im.set(n, 0, tensor_value(a.t(), "", im.layer_name(n)));
    if (a.name() == "value_float") return im.set(n, 0, constant_of({}, {a.f()}, false));
    if (a.name() == "value_int") return im.set(n, 0, constant_of({}, {static_cast<double>(a.i())}, true));
    if (a.name() == "value_ints") {
      std::vector<double> d(a.ints().begin(), a.ints().end());
      return im.set(n, 0, constant_of({static_cast<int64_t>(d.size())}, d, true));
    }
    if (a.name() == "value_floats") {
      std::vector<double> d(a.floats().begin(), a.floats().end());
      return im.set(n, 0, constant_of({static_cast<int64_t>(d.size())}, d, false));
    }
  }
  im.fail(n, "Constant without a supported value attribute");
}

void identity_or_cast(Importer& im, const NodeProto& n) {
  Value v = im.value(n, 0);
  if (n.op_type() == "Cast" && v.kind == Kind::Constant) {
    int to = static_cast<int>(attr_int(n, "to", onnx::TensorProto::FLOAT));
    v.integer = to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32 || to == onnx::TensorProto::BOOL;
    if (v.integer)
      for (double& d : v.data) d = std::trunc(d);
  }
  im.set(n, 0, v);  // an activation's dtype is the builder's (fp32, or bf16 under mixed precision)
}

}  // namespace dlsim::workloads_internal::values
#endif
