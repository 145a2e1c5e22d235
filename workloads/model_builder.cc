// ModelBuilder: PyTorch's shape rules and the tensors each forward op creates. This file holds the frame every
// layer stands on (options, names, parameters, autocast's casts, blocks); the layers are in model_builder_*.cc.
//
// Conventions the training synthesis (training.cc) relies on, per op kind (inputs -> outputs):
//   Conv2d      [x, w, (b)] -> [y]                 attrs kernel/stride/pad/dilation/groups, macs
//   BatchNorm   [x, gamma, beta, running_mean, running_var] -> [y, save_mean, save_invstd, running_mean,
//               running_var]   (training mode updates the running statistics in place; they are Weight-kind
//               persistent buffers but not learnable, so they get no gradient and are not counted as params)
//   Relu        [x] -> [x] when in place (as torchvision's inplace=True), else [x] -> [y]
//   Relu6       [x, saved_input] -> [x] in place (see relu6()), else [x] -> [y]
//   MaxPool     [x] -> [y, indices(i64)]           Dropout [x] -> [y, mask(bool)]
//   Linear      [x, w, (b)] -> [y]                 MatMul [a, b] -> [y]
//   LayerNorm   [x, gamma, beta] -> [y, mean, rstd]   Embedding [ids, w] -> [y]
//   CrossEntropyLoss [logits, labels] -> [loss, log_probs]
//   Flatten/Reshape [x] -> [y]: views; training.cc elides them (the output shares x's storage, as in PyTorch)
//   Other/Split [x] -> [y0, y1, ...]: views of x's slices along attr axis; training.cc elides them too
//   Copy        [x] -> [y]: a dtype cast (autocast), attr cast=1
//
// Mixed precision (16-bit activations, fp32 weights) follows CUDA autocast: conv2d/linear/matmul run in the
// 16-bit type, casting fp32 inputs down (a weight is cast once and the copy reused, as autocast's cast cache
// does); softmax, layer_norm and cross_entropy run in fp32, casting 16-bit inputs up; the other ops keep their
// input's dtype (add/concat promote to the widest). Weights stay fp32 masters. A model held in bf16 (weights
// bf16 too) has no autocast: every op runs in bf16 and nothing is cast but the fp32 input images.
// TF32: an fp32 convolution carries attr tf32=0 when TF32 is off, an fp32 linear/matmul tf32=1 when it is allowed
// for matmuls too; PyTorch's default (cuDNN yes, cuBLAS no) adds no attribute, so that default graphs keep the
// op signatures a calibration measured.

#include "workloads/model_builder.h"

#include "common/config_error.h"
#include "workloads/internal/model_builder_helpers.h"

namespace dlsim {

using namespace workloads_internal;

BuildOptions build_options(const TrainingOptions& t) {
  BuildOptions o;
  switch (t.precision) {
    case Precision::FP32: break;
    case Precision::MixedFP16: o.activations = DType::F16; break;
    case Precision::MixedBF16: o.activations = DType::BF16; break;
    case Precision::BF16: o.activations = o.weights = DType::BF16; break;
  }
  o.tf32 = t.tf32;
  o.fused = t.kernels == Kernels::Fused;
  return o;
}

ModelBuilder::ModelBuilder(std::string model_name, int64_t batch, DType act_dtype)
    : ModelBuilder(std::move(model_name), batch, BuildOptions{act_dtype, DType::F32, Tf32::Conv, false}) {}

ModelBuilder::ModelBuilder(std::string model_name, int64_t batch, const BuildOptions& options)
    : act_dtype_(options.activations), opts_(options) {
  g_.name = std::move(model_name);
  g_.batch = batch;
  if (batch <= 0) throw ConfigError(g_.name, 0, "batch", "batch size must be positive, got " + std::to_string(batch));
  auto floating = [](DType t) { return t == DType::F32 || t == DType::BF16 || t == DType::F16; };
  if (!floating(options.activations))
    throw ConfigError(g_.name, 0, "precision", std::string("activations must be f32, bf16 or f16, got ") + to_string(options.activations));
  if (options.weights != DType::F32 && options.weights != options.activations)
    throw ConfigError(g_.name, 0, "precision", "weights must be fp32 masters or of the activations' dtype");
}

void ModelBuilder::mark_tf32(Op& op, bool convolution) const {
  if (act_dtype_ != DType::F32) return;
  if (convolution && opts_.tf32 == Tf32::Off) op.set_attr(Attr::tf32, 0);
  if (!convolution && opts_.tf32 == Tf32::All) op.set_attr(Attr::tf32, 1);
}

std::string ModelBuilder::auto_name(const std::string& prefix, const std::string& given) {
  ++counter_;
  return given.empty() ? prefix + std::to_string(counter_) : given;
}

TensorId ModelBuilder::input(const std::vector<int64_t>& shape, DType dtype, const std::string& name) {
  return new_tensor(g_, name, TensorKind::Input, dtype, shape);
}

TensorId ModelBuilder::parameter(const std::vector<int64_t>& shape, const std::string& name) {
  TensorId id = new_tensor(g_, name, TensorKind::Weight, opts_.weights, shape, true);
  g_.tensor(id).learnable = true;
  return id;
}

// Autocast: a tensor entering a bf16 op is cast to bf16 (weights through the cast cache); entering an fp32 op,
// a bf16 tensor is cast up.
TensorId ModelBuilder::cast_for(TensorId x, DType to, const std::string& layer) {
  const Tensor& t = g_.tensor(x);
  if (t.dtype == to || (t.dtype != DType::F32 && t.dtype != DType::BF16 && t.dtype != DType::F16)) return x;
  if (t.kind == TensorKind::Weight) {
    auto it = weight_casts_.find(x);
    if (it != weight_casts_.end()) return it->second;
  }
  std::string name = t.name + "." + to_string(to);
  std::vector<int64_t> shape = t.shape;
  bool is_weight = t.kind == TensorKind::Weight;
  TensorId y = new_tensor(g_, name, TensorKind::Activation, to, shape);
  emit(g_, layer + ".cast", OpKind::Copy, {x}, {y}, 0, {{Attr::cast, 1}});
  if (is_weight) weight_casts_[x] = y;
  return y;
}

TensorId ModelBuilder::cast(TensorId x, DType to, const std::string& name) {
  const Tensor& t = g_.tensor(x);
  if (t.dtype == to) return x;
  const std::string tname = t.name + "." + to_string(to);
  std::vector<int64_t> shape = t.shape;
  TensorId y = new_tensor(g_, tname, TensorKind::Activation, to, shape);
  emit(g_, name + ".cast", OpKind::Copy, {x}, {y}, 0, {{Attr::cast, 1}});
  return y;
}

void ModelBuilder::begin_block(const std::string& name) {
  if (in_block_) fail(g_, name, "blocks do not nest: block '" + g_.blocks.back() + "' is still open");
  g_.blocks.push_back(name);
  block_first_op_ = g_.ops().size();
  in_block_ = true;
}

void ModelBuilder::end_block() {
  if (!in_block_) fail(g_, "block", "end_block without begin_block");
  const auto index = static_cast<int32_t>(g_.blocks.size() - 1);
  for (size_t i = block_first_op_; i < g_.ops().size(); ++i) g_.op(static_cast<OpId>(i)).block = index;
  in_block_ = false;
}

Graph ModelBuilder::finish() {
  if (in_block_) fail(g_, g_.blocks.back(), "block left open at finish");
  Graph out = std::move(g_);
  g_ = Graph();
  g_.name = out.name;
  g_.batch = out.batch;
  weight_casts_.clear();
  return out;
}

}  // namespace dlsim
