// One handler per ONNX op: layers become ModelBuilder calls, shape arithmetic is folded into constants.
//
// Supported: Conv, BatchNormalization, Relu, Clip (as ReLU6 or ReLU), MaxPool, AveragePool (a Pad before it
// is fused, as PyTorch exports count_include_pad), GlobalAveragePool, Add/Sub/Mul/Div, Concat, Gemm, MatMul
// (a MatMul by a weight plus an Add of a bias is one linear layer), Flatten, Reshape, Transpose, Dropout,
// Pad, Softmax, LayerNormalization, Gather (embedding lookup; select), Identity, and GELU in the form the
// exporter writes below opset 20 (Div by sqrt 2, Erf, Add 1, Mul by x, Mul by 0.5: recognised as a pattern);
// Tanh, SoftmaxCrossEntropyLoss (the file's own loss), the tanh GELU chain (Mul x x ... Tanh ... Mul 0.5),
// a Split of a projection (Gemm, Reshape, Split: one linear layer per part), Where(mask, x, c) as an Add of
// the mask, Slice of an activation (a cropping Pad); folded (onnx_import_values.cc) when their inputs are
// known: Constant, Shape, Gather, Unsqueeze, Squeeze, Concat, Cast, Slice, ConstantOfShape, Equal, Where and
// elementwise arithmetic;
// Slice and Expand of an ids buffer (a graph input whose values do not matter, only its shape). LayerNorm
// decomposed into ReduceMean/Sub/Pow/Sqrt (opset < 17) is not recognised: export transformers at opset 17.
// Anything else is a ConfigError naming the node and the op.
//
// In-place ReLU: an ONNX file cannot say whether PyTorch ran ReLU in place. torchvision does (inplace=True)
// wherever the ReLU is the only reader of a conv / batch-norm / linear / add output, and autograd's kept
// bytes are the same either way; so a ReLU is imported in place exactly then.
#ifdef DLSIM_WITH_ONNX
#include <cmath>
#include <functional>

#include "workloads/internal/onnx_importer.h"

namespace dlsim::workloads_internal {
namespace {

using onnx::NodeProto;
using Kind = Value::Kind;
using namespace values;

bool producer_allows_inplace(Importer& im, TensorId t) {
  for (auto it = im.builder().graph().ops().rbegin(); it != im.builder().graph().ops().rend(); ++it) {
    for (TensorId o : it->outputs)
      if (o == t)
        return it->kind == OpKind::Conv2d || it->kind == OpKind::BatchNorm || it->kind == OpKind::Linear ||
               it->kind == OpKind::Add;
  }
  return false;  // a graph input
}

bool relu_inplace(Importer& im, const NodeProto& n, TensorId x) {
  return im.consumers(n.input(0)) == 1 && producer_allows_inplace(im, x);
}

// --------------------------------------------------------------- layers
void conv(Importer& im, const NodeProto& n) {
  TensorId x = im.activation(n, 0);
  const Value& w = im.param(n, 1);
  if (w.shape.size() != 4) im.fail(n, "only 2-D convolutions are supported (weight of rank " + std::to_string(w.shape.size()) + ")");
  if (attr_string(n, "auto_pad", "NOTSET") != "NOTSET") im.fail(n, "auto_pad is not supported; export with explicit pads");
  auto strides = attr_ints(n, "strides", {1, 1}), dil = attr_ints(n, "dilations", {1, 1});
  auto pads = attr_ints(n, "pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4) im.fail(n, "strides, dilations and pads must describe 2 spatial axes");
  if (dil[0] != dil[1]) im.fail(n, "different dilations per axis are not supported");
  // kernel_shape is optional and must then agree with the weight: a disagreeing one (a zero, say) was ignored.
  if (const auto ks = attr_ints(n, "kernel_shape", {}); !ks.empty() && ks != std::vector<int64_t>{w.shape[2], w.shape[3]})
    im.fail(n, "kernel_shape " + shape_str(ks) + " disagrees with the weight's " + shape_str(w.shape));
  int64_t groups = attr_int(n, "group", 1);
  std::string name = im.layer_name(n);
  if (pads[0] != pads[2] || pads[1] != pads[3]) {  // asymmetric: an explicit zero pad first
    x = im.builder().pad(x, {0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]}, name + ".pad");
    pads = {0, 0, 0, 0};
  }
  const auto& xs = im.builder().graph().tensor(x).shape;
  if (xs.size() != 4 || xs[1] != w.shape[1] * groups)
    im.fail(n, "input channels do not match the weight's " + std::to_string(w.shape[1]) + " x " + std::to_string(groups) + " groups");
  if (im.existing_weight(w) != kNoTensor) im.fail(n, "weight '" + w.source + "' is shared with another layer; not supported for Conv");
  TensorId y = im.builder().conv2d(x, w.shape[0], w.shape[2], w.shape[3], strides[0], strides[1], pads[0], pads[1], groups,
                                   im.has_input(n, 2), name, dil[0]);
  if (im.has_input(n, 2)) im.param(n, 2);
  im.set_activation(n, 0, y);
}

void batch_norm(Importer& im, const NodeProto& n) {
  TensorId x = im.activation(n, 0);
  int64_t c = im.builder().graph().tensor(x).shape.at(1);
  for (int i = 1; i <= 4; ++i) {
    const Value& p = im.param(n, i);
    if (p.shape != std::vector<int64_t>{c}) im.fail(n, "batch-norm parameter '" + n.input(i) + "' is not of shape [" + std::to_string(c) + "]");
  }
  im.set_activation(n, 0, im.builder().batch_norm(x, im.layer_name(n)));  // outputs 1.. (running stats) unused
}

void relu(Importer& im, const NodeProto& n) {
  TensorId x = im.activation(n, 0);
  im.set_activation(n, 0, im.builder().relu(x, relu_inplace(im, n, x), im.layer_name(n)));
}

void clip(Importer& im, const NodeProto& n) {
  TensorId x = im.activation(n, 0);
  double lo = -INFINITY, hi = INFINITY;
  if (im.opset() < 11) {
    lo = attr_float(n, "min", -INFINITY);
    hi = attr_float(n, "max", INFINITY);
  } else {
    if (im.has_input(n, 1)) lo = im.constant(n, 1).data.at(0);
    if (im.has_input(n, 2)) hi = im.constant(n, 2).data.at(0);
  }
  bool inplace = relu_inplace(im, n, x);
  if (lo == 0 && hi == 6) return im.set_activation(n, 0, im.builder().relu6(x, inplace, im.layer_name(n)));
  if (lo == 0 && std::isinf(hi)) return im.set_activation(n, 0, im.builder().relu(x, inplace, im.layer_name(n)));
  im.fail(n, "Clip to [" + std::to_string(lo) + ", " + std::to_string(hi) + "] is not supported (only ReLU6 and ReLU)");
}

struct Window {
  int64_t k, stride, pad;
};

Window square_window(Importer& im, const NodeProto& n) {
  auto k = attr_ints(n, "kernel_shape", {}), s = attr_ints(n, "strides", {1, 1}), p = attr_ints(n, "pads", {0, 0, 0, 0});
  if (k.size() != 2 || s.size() != 2 || p.size() != 4) im.fail(n, "only 2-D pooling is supported");
  if (k[0] != k[1] || s[0] != s[1] || p[0] != p[1] || p[0] != p[2] || p[0] != p[3])
    im.fail(n, "only square pooling windows with equal strides and pads are supported");
  if (attr_string(n, "auto_pad", "NOTSET") != "NOTSET") im.fail(n, "auto_pad is not supported");
  for (int64_t d : attr_ints(n, "dilations", {1, 1}))
    if (d != 1) im.fail(n, "dilated pooling is not supported");
  return {k[0], s[0], p[0]};
}

void max_pool(Importer& im, const NodeProto& n) {
  if (n.output_size() > 1 && !n.output(1).empty()) im.fail(n, "the Indices output is not supported");
  TensorId x = im.activation(n, 0);
  Window w = square_window(im, n);
  im.set_activation(n, 0, im.builder().max_pool(x, w.k, w.stride, w.pad, attr_int(n, "ceil_mode", 0) != 0, im.layer_name(n)));
}

void avg_pool(Importer& im, const NodeProto& n) {
  TensorId x = im.activation(n, 0);
  Window w = square_window(im, n);
  im.set_activation(n, 0, im.builder().avg_pool(x, w.k, w.stride, w.pad, attr_int(n, "ceil_mode", 0) != 0,
                                                attr_int(n, "count_include_pad", 0) != 0, im.layer_name(n)));
}

// PyTorch exports avg_pool2d(padding=p, count_include_pad=True) as a zero Pad then an unpadded AveragePool;
// autograd keeps the unpadded input of one padded pooling, so the pair is one avg_pool layer.
bool fuse_pad_avg_pool(Importer& im, const NodeProto& n, const std::vector<int64_t>& pads, TensorId x) {
  const NodeProto* next = im.sole_consumer(n.output(0));
  if (!next || next->op_type() != "AveragePool" || pads.size() != 8) return false;
  if (pads[0] || pads[1] || pads[4] || pads[5] || pads[2] != pads[3] || pads[2] != pads[6] || pads[2] != pads[7]) return false;
  Window w = square_window(im, *next);
  if (w.pad != 0 || 2 * pads[2] > w.k) return false;
  im.skip(*next);
  im.set_activation(*next, 0, im.builder().avg_pool(x, w.k, w.stride, pads[2], attr_int(*next, "ceil_mode", 0) != 0, true,
                                                    im.layer_name(*next)));
  return true;
}

void pad(Importer& im, const NodeProto& n) {
  TensorId x = im.activation(n, 0);
  if (attr_string(n, "mode", "constant") != "constant") im.fail(n, "only constant padding is supported");
  std::vector<int64_t> pads = im.opset() < 11 ? attr_ints(n, "pads", {}) : ints_of(im.constant(n, 1));
  if (im.has_input(n, 3)) im.fail(n, "padding selected axes is not supported");
  if (fuse_pad_avg_pool(im, n, pads, x)) return;
  im.set_activation(n, 0, im.builder().pad(x, pads, im.layer_name(n)));
}

void global_avg_pool(Importer& im, const NodeProto& n) {
  im.set_activation(n, 0, im.builder().adaptive_avg_pool(im.activation(n, 0), 1, 1, im.layer_name(n)));
}

void flatten(Importer& im, const NodeProto& n) {
  TensorId x = im.activation(n, 0);
  const auto s = im.builder().graph().tensor(x).shape;
  int64_t axis = attr_int(n, "axis", 1);
  if (axis < 0) axis += static_cast<int64_t>(s.size());
  if (axis == 1) return im.set_activation(n, 0, im.builder().flatten(x, im.layer_name(n)));
  if (axis < 0 || axis > static_cast<int64_t>(s.size())) im.fail(n, "Flatten axis out of range");
  int64_t outer = numel(std::vector<int64_t>(s.begin(), s.begin() + axis));
  im.set_activation(n, 0, im.builder().reshape(x, {outer, numel(s) / outer}, im.layer_name(n)));
}

// A linear layer y = x W^T + b from a weight value: (out, in) for Gemm's B with transB=1, else (in, out) as
// MatMul's B (a Transpose of a PyTorch weight, whose source stays the weight for ties).
TensorId linear(Importer& im, const NodeProto& n, TensorId x, const Value& w, bool w_is_out_by_in, const Value* bias) {
  if (w.shape.size() != 2) im.fail(n, "weight '" + w.source + "' is not a matrix");
  int64_t out_f = w_is_out_by_in ? w.shape[0] : w.shape[1];
  if (bias && numel(bias->shape) != out_f) im.fail(n, "bias does not have " + std::to_string(out_f) + " elements");
  TensorId tied = im.existing_weight(w);
  if (tied != kNoTensor) return im.builder().linear_with_weight(x, tied, bias != nullptr, im.layer_name(n));
  TensorId y = im.builder().linear(x, out_f, bias != nullptr, im.layer_name(n));
  const Op& op = im.builder().graph().ops().back();
  for (TensorId t : op.inputs)  // the weight just created (or its autocast copy's source): for later ties
    if (im.builder().graph().tensor(t).kind == TensorKind::Weight && im.builder().graph().tensor(t).shape.size() == 2)
      im.remember_weight(w, t);
  return y;
}

// A projection whose output is only reshaped and then split along its last axis (GPT-2's c_attn: one
// 768x2304 Conv1D split into Q, K and V) is built as one linear layer per part, as the zoo's GPT-2 is: the
// same parameters and MACs, and the parts are what autograd keeps (torch.split returns views, which the next
// matmul copies). The Reshape and Split then act on the parts.
bool split_projection(Importer& im, const NodeProto& n, TensorId x, const Value& w, bool w_is_out_by_in, const Value* bias) {
  const NodeProto* view = im.sole_consumer(n.output(0));
  if (!view || view->op_type() != "Reshape") return false;
  const NodeProto* split = im.sole_consumer(view->output(0));
  if (!split || split->op_type() != "Split" || !im.has_input(*split, 1) || !im.is_constant(*split, 1)) return false;
  if (w.shape.size() != 2 || im.existing_weight(w) != kNoTensor) return false;
  int64_t out_f = w_is_out_by_in ? w.shape[0] : w.shape[1];
  std::vector<int64_t> sizes = ints_of(im.constant(*split, 1));
  int64_t total = 0;
  for (int64_t p : sizes) total += p;
  if (total != out_f) return false;
  Value v;
  for (size_t i = 0; i < sizes.size(); ++i)
    v.parts.push_back(im.builder().linear(x, sizes[i], bias != nullptr, im.layer_name(n) + ".part" + std::to_string(i)));
  v.tensor = kNoTensor;
  im.set(n, 0, v);
  return true;
}

void gemm(Importer& im, const NodeProto& n) {
  TensorId x = im.activation(n, 0);
  if (attr_int(n, "transA", 0) != 0 || attr_float(n, "alpha", 1) != 1 || attr_float(n, "beta", 1) != 1)
    im.fail(n, "only Gemm with transA=0, alpha=1, beta=1 (a linear layer) is supported");
  const Value& w = im.param(n, 1);
  const Value* b = im.has_input(n, 2) ? &im.param(n, 2) : nullptr;
  if (split_projection(im, n, x, w, attr_int(n, "transB", 0) != 0, b)) return;
  im.set_activation(n, 0, linear(im, n, x, w, attr_int(n, "transB", 0) != 0, b));
}

void matmul(Importer& im, const NodeProto& n) {
  TensorId a = im.activation(n, 0);
  const Value& bv = im.value(n, 1);
  if (bv.kind == Kind::Activation) return im.set_activation(n, 0, im.builder().matmul(a, bv.tensor, im.layer_name(n)));
  const Value& w = im.param(n, 1);  // x @ W: a linear layer without bias, or with the Add that follows
  const NodeProto* next = im.sole_consumer(n.output(0));
  int64_t out_f = w.shape.size() == 2 ? w.shape[1] : -1;  // x (.., in) @ W (in, out), a Transpose or not
  if (next && next->op_type() == "Add" && next->input_size() == 2) {
    int other = next->input(0) == n.output(0) ? 1 : 0;
    const Value& bias = im.value(*next, other);
    if ((bias.kind == Kind::Param || bias.kind == Kind::GraphInput) && numel(im.param(*next, other).shape) == out_f) {
      im.skip(*next);
      return im.set_activation(*next, 0, linear(im, *next, a, w, false, &im.param(*next, other)));
    }
  }
  im.set_activation(n, 0, linear(im, n, a, w, false, nullptr));
}

void dropout(Importer& im, const NodeProto& n) {
  TensorId x = im.activation(n, 0);
  double ratio = im.opset() < 12 ? attr_float(n, "ratio", 0.5f) : (im.has_input(n, 1) ? im.constant(n, 1).data.at(0) : 0.5);
  bool training = im.opset() < 12 ? true : (im.has_input(n, 2) && im.constant(n, 2).data.at(0) != 0);
  if (!training || ratio == 0) return im.set_activation(n, 0, x);  // inference dropout is the identity
  im.set_activation(n, 0, im.builder().dropout(x, ratio, im.layer_name(n)));
}

void softmax(Importer& im, const NodeProto& n) {
  TensorId x = im.activation(n, 0);
  size_t rank = im.builder().graph().tensor(x).shape.size();
  int64_t axis = norm_axis(im, n, attr_int(n, "axis", im.opset() < 13 ? 1 : -1), rank);
  if (im.opset() < 13 && axis != static_cast<int64_t>(rank) - 1) im.fail(n, "Softmax before opset 13 flattens from its axis; only the last axis is supported");
  im.set_activation(n, 0, im.builder().softmax(x, axis, im.layer_name(n)));
}

void layer_norm(Importer& im, const NodeProto& n) {
  TensorId x = im.activation(n, 0);
  const auto& s = im.builder().graph().tensor(x).shape;
  if (norm_axis(im, n, attr_int(n, "axis", -1), s.size()) != static_cast<int64_t>(s.size()) - 1)
    im.fail(n, "only normalisation over the last axis is supported");
  for (int i = 1; i <= 2 && im.has_input(n, i); ++i)
    if (im.param(n, i).shape != std::vector<int64_t>{s.back()}) im.fail(n, "scale/bias is not of the normalised size");
  im.set_activation(n, 0, im.builder().layer_norm(x, im.layer_name(n)));
}

// GELU as exporters write it: y = (x * (erf(x / sqrt2) + 1)) * 0.5, matched from the Div node.
bool gelu_pattern(Importer& im, const NodeProto& div) {
  const std::string& x = div.input(0);
  if (!im.is_constant(div, 1) || std::abs(im.constant(div, 1).data.at(0) - std::sqrt(2.0)) > 1e-3) return false;
  const NodeProto* erf = im.sole_consumer(div.output(0));
  if (!erf || erf->op_type() != "Erf") return false;
  const NodeProto* add = im.sole_consumer(erf->output(0));
  if (!add || add->op_type() != "Add") return false;
  const NodeProto* mul = im.sole_consumer(add->output(0));
  if (!mul || mul->op_type() != "Mul" || (mul->input(0) != x && mul->input(1) != x)) return false;
  const NodeProto* half = im.sole_consumer(mul->output(0));
  if (!half || half->op_type() != "Mul") return false;
  int hc = half->input(0) == mul->output(0) ? 1 : 0;
  if (!im.is_constant(*half, hc) || im.constant(*half, hc).data.at(0) != 0.5) return false;
  for (const NodeProto* p : {erf, add, mul, half}) im.skip(*p);
  im.set_activation(*half, 0, im.builder().gelu(im.activation(div, 0), im.layer_name(div)));
  return true;
}

// The tanh GELU as the exporter writes F.gelu(approximate="tanh") (GPT-2): from Mul(x, x), the chain
// Mul(x, .), Mul(c, .), Add(x, .), Mul(c, .), Tanh, Add(1, .), Mul(x, .), Mul(0.5, .), each the sole reader.
bool gelu_tanh_pattern(Importer& im, const NodeProto& sq) {
  const std::string& x = sq.input(0);
  const std::vector<std::string> ops = {"Mul", "Mul", "Add", "Mul", "Tanh", "Add", "Mul", "Mul"};
  std::vector<const NodeProto*> chain;
  const NodeProto* cur = &sq;
  for (const std::string& op : ops) {
    const NodeProto* next = im.sole_consumer(cur->output(0));
    if (!next || next->op_type() != op) return false;
    chain.push_back(cur = next);
  }
  auto reads_x = [&](const NodeProto* p) { return p->input(0) == x || p->input(1) == x; };
  if (!reads_x(chain[0]) || !reads_x(chain[2]) || !reads_x(chain[6])) return false;
  for (const NodeProto* p : chain) im.skip(*p);
  im.set_activation(*chain.back(), 0, im.builder().gelu(im.activation(sq, 0), im.layer_name(sq)));
  return true;
}

// --------------------------------------------------------------- elementwise and folding
void binary(Importer& im, const NodeProto& n) {
  const std::string& op = n.op_type();
  if (op == "Div" && gelu_pattern(im, n)) return;
  if (im.is_constant(n, 0) && im.is_constant(n, 1)) return im.set(n, 0, fold_binary(im, n, im.constant(n, 0), im.constant(n, 1)));
  if (op == "Mul" && n.input(0) == n.input(1) && gelu_tanh_pattern(im, n)) return;
  if (op == "Equal" || op == "Pow") im.fail(n, op + " on activations is not supported");
  std::string name = im.layer_name(n);
  // A constant operand (a scale, a shift, a mask) is a non-learnable input of its shape.
  auto operand = [&](int i) -> TensorId {
    const Value& v = im.value(n, i);
    if (v.kind == Kind::Activation || v.kind == Kind::GraphInput) return im.activation(n, i);
    if (v.kind == Kind::Param) {
      TensorId w = im.existing_weight(v);
      if (w == kNoTensor) im.remember_weight(v, w = im.builder().parameter(v.shape, v.source));
      return w;
    }
    return im.constant_input(n, i);
  };
  TensorId a = operand(0), b = operand(1);
  if (op == "Add" || op == "Sub") return im.set_activation(n, 0, im.builder().add(a, b, false, name));
  // Mul, and Div: a division costs and keeps what a multiplication by the reciprocal does.
  im.set_activation(n, 0, im.builder().mul(a, b, name));
}

void tanh(Importer& im, const NodeProto& n) {
  im.set_activation(n, 0, im.builder().tanh(im.activation(n, 0), im.layer_name(n)));
}

// The loss the exporter wrote (F.cross_entropy): the builder's cross entropy over the same logits.
void softmax_cross_entropy(Importer& im, const NodeProto& n) {
  TensorId logits = im.activation(n, 0);
  if (attr_string(n, "reduction", "mean") != "mean") im.fail(n, "only reduction 'mean' is supported");
  if (n.output_size() > 1 && !n.output(1).empty()) im.fail(n, "the log_prob output is not supported");
  im.set_activation(n, 0, im.builder().cross_entropy_loss(logits, im.layer_name(n)));
  im.loss_emitted();
}

using Handler = std::function<void(Importer&, const NodeProto&)>;

const std::map<std::string, Handler>& handlers() {
  static const std::map<std::string, Handler> h = {
      {"Conv", conv}, {"BatchNormalization", batch_norm}, {"Relu", relu}, {"Clip", clip}, {"MaxPool", max_pool},
      {"AveragePool", avg_pool}, {"GlobalAveragePool", global_avg_pool}, {"Pad", pad}, {"Flatten", flatten},
      {"Gemm", gemm}, {"MatMul", matmul}, {"Dropout", dropout}, {"Softmax", softmax},
      {"LayerNormalization", layer_norm}, {"Add", binary}, {"Sub", binary}, {"Mul", binary}, {"Div", binary},
      {"Equal", binary}, {"Concat", concat}, {"Reshape", reshape}, {"Transpose", transpose}, {"Gather", gather},
      {"Shape", shape}, {"Unsqueeze", unsqueeze_squeeze}, {"Squeeze", unsqueeze_squeeze}, {"Slice", slice},
      {"Constant", constant}, {"Identity", identity_or_cast}, {"Cast", identity_or_cast},
      {"ConstantOfShape", constant_of_shape}, {"Where", where}, {"Expand", expand}, {"Tanh", tanh},
      {"SoftmaxCrossEntropyLoss", softmax_cross_entropy},
      {"Split", split}, {"Pow", binary},
  };
  return h;
}

}  // namespace

void Importer::handle(const NodeProto& n) {
  auto it = handlers().find(n.op_type());
  if (it == handlers().end()) fail(n, "unsupported ONNX op '" + n.op_type() + "'");
  it->second(*this, n);
}

}  // namespace dlsim::workloads_internal
#endif
