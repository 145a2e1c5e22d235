// ModelBuilder's layers that only move or view data: flatten, reshape and split (views), transpose, pad, concat
// and select.
#include "workloads/model_builder.h"

#include "workloads/internal/model_builder_helpers.h"

namespace dlsim {

using namespace workloads_internal;

TensorId ModelBuilder::flatten(TensorId x, const std::string& name) {
  std::string n = auto_name("flatten", name);
  auto s = shape_of(g_, x, n);
  if (s.empty()) fail(g_, n, "cannot flatten a scalar");
  std::vector<int64_t> os = {s[0], numel(s) / s[0]};
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, os);
  emit(g_, n, OpKind::Flatten, {x}, {y}, 0, {{Attr::view, 1}});
  return y;
}

TensorId ModelBuilder::reshape(TensorId x, const std::vector<int64_t>& shape, const std::string& name) {
  std::string n = auto_name("reshape", name);
  auto s = shape_of(g_, x, n);
  std::vector<int64_t> os = shape;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < os.size(); ++i) {
    if (os[i] == -1) {
      if (infer >= 0) fail(g_, n, "reshape to " + shape_str(shape) + " has more than one -1");
      infer = static_cast<int64_t>(i);
    } else if (os[i] <= 0) {
      fail(g_, n, "reshape to " + shape_str(shape) + " has a non-positive dimension");
    } else {
      known *= os[i];
    }
  }
  if (infer >= 0) os[static_cast<size_t>(infer)] = numel(s) / known;
  if (numel(os) != numel(s)) fail(g_, n, "cannot reshape " + shape_str(s) + " to " + shape_str(shape));
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, os);
  emit(g_, n, OpKind::Reshape, {x}, {y}, 0, {{Attr::view, 1}});
  return y;
}

std::vector<TensorId> ModelBuilder::split(TensorId x, int64_t parts, int64_t axis, const std::string& name) {
  std::string n = auto_name("split", name);
  std::vector<int64_t> s = shape_of(g_, x, n);
  const int64_t rank = static_cast<int64_t>(s.size()), ax = axis < 0 ? axis + rank : axis;
  if (ax < 0 || ax >= rank) fail(g_, n, "split axis " + std::to_string(axis) + " is out of range for shape " + shape_str(s));
  if (parts < 1 || s[static_cast<size_t>(ax)] % parts != 0)
    fail(g_, n, "cannot split axis " + std::to_string(ax) + " of " + shape_str(s) + " into " + std::to_string(parts) +
                    " equal parts");
  s[static_cast<size_t>(ax)] /= parts;
  std::vector<TensorId> ys;
  for (int64_t i = 0; i < parts; ++i)
    ys.push_back(new_tensor(g_, n + ".out" + std::to_string(i), TensorKind::Activation, g_.tensor(x).dtype, s));
  emit_other(g_, n, OtherOp::Split, {x}, ys, 0, {{Attr::axis, ax}});
  return ys;
}

// A transpose is materialised (a copy kernel), as PyTorch does when a permuted tensor is made contiguous
// for the next kernel; attribute perm gives the permutation.
TensorId ModelBuilder::transpose(TensorId x, const std::vector<int64_t>& perm, const std::string& name) {
  std::string n = auto_name("transpose", name);
  auto s = shape_of(g_, x, n);
  if (perm.size() != s.size()) fail(g_, n, "permutation of " + std::to_string(perm.size()) + " axes for shape " + shape_str(s));
  std::vector<bool> seen(s.size(), false);
  std::vector<int64_t> os(s.size());
  std::vector<int64_t> axes(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t p = perm[i] < 0 ? perm[i] + static_cast<int64_t>(s.size()) : perm[i];
    if (p < 0 || p >= static_cast<int64_t>(s.size()) || seen[static_cast<size_t>(p)]) fail(g_, n, "invalid permutation");
    seen[static_cast<size_t>(p)] = true;
    os[i] = s[static_cast<size_t>(p)];
    axes[i] = p;
  }
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, os);
  const OpId id = emit(g_, n, OpKind::Transpose, {x}, {y}, 0);
  g_.op(id).set_attr_list(Attr::perm, axes);
  return y;
}

// pads: ONNX order, all begins then all ends (x1_begin, x2_begin, ..., x1_end, x2_end); zero padding.
TensorId ModelBuilder::pad(TensorId x, const std::vector<int64_t>& pads, const std::string& name) {
  std::string n = auto_name("pad", name);
  auto s = shape_of(g_, x, n);
  if (pads.size() != 2 * s.size()) fail(g_, n, "pads needs 2 values per axis (" + std::to_string(2 * s.size()) + "), got " + std::to_string(pads.size()));
  for (int64_t p : pads)
    if (p < -kMaxLayerSize || p > kMaxLayerSize) fail(g_, n, "pads must be in [-2^31, 2^31], got " + std::to_string(p));
  std::vector<int64_t> os = s;
  for (size_t i = 0; i < s.size(); ++i) os[i] += pads[i] + pads[i + s.size()];
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, os);
  Op& o = g_.op(emit(g_, n, OpKind::Pad, {x}, {y}, 0));
  o.set_attr_list(Attr::pad_begin, std::vector<int64_t>(pads.begin(), pads.begin() + static_cast<ptrdiff_t>(s.size())));
  o.set_attr_list(Attr::pad_end, std::vector<int64_t>(pads.begin() + static_cast<ptrdiff_t>(s.size()), pads.end()));
  return y;
}

TensorId ModelBuilder::concat(const std::vector<TensorId>& xs, int64_t axis, const std::string& name) {
  std::string n = auto_name("cat", name);
  if (xs.empty()) fail(g_, n, "concat of no tensors");
  auto os = shape_of(g_, xs[0], n);
  int64_t ax = axis < 0 ? axis + static_cast<int64_t>(os.size()) : axis;
  if (ax < 0 || ax >= static_cast<int64_t>(os.size())) fail(g_, n, "concat axis " + std::to_string(axis) + " out of range");
  DType dt = g_.tensor(xs[0]).dtype;
  for (size_t i = 1; i < xs.size(); ++i) {
    auto s = shape_of(g_, xs[i], n);
    if (s.size() != os.size()) fail(g_, n, "concat of tensors of different ranks");
    for (size_t d = 0; d < s.size(); ++d)
      if (static_cast<int64_t>(d) != ax && s[d] != os[d]) fail(g_, n, "concat shapes " + shape_str(os) + " and " + shape_str(s) + " differ off the axis");
    os[static_cast<size_t>(ax)] += s[static_cast<size_t>(ax)];
    dt = wider(dt, g_.tensor(xs[i]).dtype);
  }
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, dt, os);
  emit(g_, n, OpKind::Concat, xs, {y}, 0, {{Attr::axis, ax}});
  return y;
}

// select has no OpKind of its own (model_builder.h says why): an Other op of sub-kind Select.
TensorId ModelBuilder::select(TensorId x, int64_t axis, int64_t index, const std::string& name) {
  std::string n = auto_name("select", name);
  std::vector<int64_t> s = shape_of(g_, x, n);
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t ax = axis < 0 ? axis + rank : axis;
  if (rank < 2 || ax < 0 || ax >= rank)
    fail(g_, n, "select axis " + std::to_string(axis) + " is out of range for shape " + shape_str(s));
  int64_t len = s[static_cast<size_t>(ax)];
  if (index < -len || index >= len)
    fail(g_, n, "select index " + std::to_string(index) + " is out of range for shape " + shape_str(s));
  s.erase(s.begin() + ax);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, s);
  emit_other(g_, n, OtherOp::Select, {x}, {y}, 0, {{Attr::axis, ax}, {Attr::index, index < 0 ? index + len : index}});
  return y;
}

}  // namespace dlsim
