#include "validate/gpu/op_translation.h"

#include <sstream>

#include "validate/gpu/internal/op_translation_helpers.h"

namespace dlsim {

using namespace validate_internal;

namespace {

// What the simulator models but the harness has no kernel for: the layout transposes of 16-bit NCHW
// convolutions (workloads/memory_format.h: cuDNN does them inside its own calls), fused kernels
// (Kernels::Fused, workloads/training.h) and AMP's loss scaling. The harness refuses them by name rather than run
// something else.
void check_supported(const Graph& g, const Op& op) {
  static const std::pair<Attr, const char*> kModelOnly[] = {
      {Attr::layout_transpose,
       "a layout transpose of a 16-bit NCHW convolution (run the harness with memory_format: nhwc)"},
      {Attr::fused_relu, "a fused batch norm + ReLU (kernels: fused)"},
      {Attr::fused_bias, "a fused bias + GELU (kernels: fused)"},
      {Attr::fused_mask_dropout, "a fused scale + mask + softmax + dropout (kernels: fused)"},
      {Attr::multi_tensor, "a multi-tensor optimizer step (kernels: fused)"},
      {Attr::amp_scale_loss, "AMP's loss scaling (precision: mixed-fp16)"},
  };
  const Op& f = op.forward_op >= 0 ? g.op(op.forward_op) : op;
  auto carries = [](const Op& o, Attr a) { return o.declares(a) && o.has_attr(a); };
  for (const auto& [attr, what] : kModelOnly)
    if (carries(op, attr) || carries(f, attr)) fail(g, op, std::string("the GPU harness has no kernel for ") + what);
  // gelu_new written out (GPT-2 with attention: sdpa-flash): products and sums with a Python scalar, and pow
  if ((op.kind == OpKind::Mul || op.kind == OpKind::Add) && op.inputs.size() == 1)
    fail(g, op, "the GPU harness has no kernel for a product or sum with a scalar (gelu_new written out)");
  if (op.other == OtherOp::Pow || f.other == OtherOp::Pow)
    fail(g, op, "the GPU harness has no kernel for pow (gelu_new or RMSNorm written out)");
  for (OtherOp o : {OtherOp::Mean, OtherOp::Rsqrt})
    if (op.other == o || f.other == o)
      fail(g, op, std::string("the GPU harness has no kernel for ") + to_string(o) + " (RMSNorm written out)");
  for (OtherOp o : {OtherOp::NegHalf, OtherOp::CatHalves, OtherOp::Fill})
    if (op.other == o || f.other == o)
      fail(g, op, std::string("the GPU harness has no kernel for ") + to_string(o) + " (the rotary written out)");
  if (op.other == OtherOp::AmpUnscale || f.other == OtherOp::AmpUnscale)
    fail(g, op, "the GPU harness has no kernel for AMP's gradient unscale (precision: mixed-fp16)");
}

}  // namespace

OpTranslation translate_op(const Graph& g, const Op& op) {
  check_supported(g, op);
  OpTranslation kp;
  kp.op = op.id;
  switch (op.kind) {
    case OpKind::Conv2d: case OpKind::Conv2dBwdData: case OpKind::Conv2dBwdFilter: translate_conv(g, op, kp); break;
    case OpKind::BatchNorm: case OpKind::BatchNormBwd: translate_batch_norm(g, op, kp); break;
    case OpKind::Relu: case OpKind::Relu6: case OpKind::ReluBwd: case OpKind::Gelu: case OpKind::GeluBwd:
      translate_activation(g, op, kp);
      break;
    case OpKind::MaxPool: case OpKind::AvgPool: case OpKind::GlobalAvgPool: case OpKind::AdaptiveAvgPool:
    case OpKind::MaxPoolBwd: case OpKind::AvgPoolBwd:
      translate_pool(g, op, kp);
      break;
    case OpKind::Linear: case OpKind::LinearBwdData: case OpKind::LinearBwdWeight: translate_linear(g, op, kp); break;
    case OpKind::MatMul: case OpKind::MatMulBwd: translate_matmul(g, op, kp); break;
    case OpKind::Softmax: case OpKind::SoftmaxBwd: translate_softmax(g, op, kp); break;
    // Our kernels. Every kind is listed (no default): a new OpKind is a -Wswitch warning here, not a silent
    // fall into some family.
    case OpKind::Add: case OpKind::Mul: case OpKind::MulBwd: case OpKind::GradAccumulate: case OpKind::Dropout:
    case OpKind::DropoutBwd: case OpKind::ZeroGrad: case OpKind::SgdMomentumUpdate: case OpKind::AdamUpdate:
      translate_elementwise(g, op, kp);
      break;
    case OpKind::Flatten: case OpKind::Reshape: case OpKind::Copy: case OpKind::Transpose: case OpKind::Pad:
    case OpKind::PadBwd: case OpKind::Concat: case OpKind::ConcatBwd:
      translate_data_movement(g, op, kp);
      break;
    case OpKind::LayerNorm: case OpKind::LayerNormBwd: case OpKind::Embedding: case OpKind::EmbeddingBwd:
    case OpKind::CrossEntropyLoss: case OpKind::CrossEntropyLossBwd:
      translate_rowwise(g, op, kp);
      break;
    case OpKind::Other: translate_other(g, op, kp); break;
    // The Llama family's ops (workloads/llama_models.h): simulated, not yet run by the harness.
    case OpKind::RmsNorm: case OpKind::RmsNormBwd: case OpKind::Rotary: case OpKind::RotaryBwd: case OpKind::RepeatKv:
    case OpKind::RepeatKvBwd: case OpKind::Silu: case OpKind::SiluBwd: case OpKind::FlashAttention:
    case OpKind::FlashAttentionBwd:
      fail(g, op, std::string("the GPU harness has no kernel for ") + to_string(op.kind) + " yet");
    // The harness drives one GPU in one process: there is no other rank to exchange with.
    case OpKind::AllReduce: case OpKind::AllGather: case OpKind::ReduceScatter: case OpKind::Broadcast:
      fail(g, op, std::string("the GPU harness runs one GPU and cannot run a collective (") + to_string(op.kind) +
                      "); simulate it with dlsim instead");
  }
  if ((kp.lib != KernelLib::Ours) && kp.dtype != DType::F32 && kp.dtype != DType::BF16 && kp.dtype != DType::F16)
    fail(g, op, std::string("cuDNN/cuBLAS run for data type ") + to_string(kp.dtype) + " is not supported");
  return kp;
}

std::vector<OpTranslation> translate_graph(const Graph& g) {
  std::vector<OpTranslation> v;
  v.reserve(g.ops().size());
  for (const Op& op : g.ops()) v.push_back(translate_op(g, op));
  return v;
}

std::map<TensorId, int64_t> index_ranges(const Graph& g) {
  std::map<TensorId, int64_t> r;
  for (const Op& op : g.ops()) {
    if (op.kind == OpKind::Embedding && op.inputs.size() >= 2) {
      // [ids, table] (the builder's convention)
      const Tensor& table = g.tensor(op.inputs[1]);
      if (table.shape.size() == 2) r[op.inputs[0]] = table.shape[0];
    }
    if (op.kind == OpKind::CrossEntropyLoss && !op.inputs.empty()) {
      const Tensor& logits = g.tensor(op.inputs[0]);
      for (TensorId id : op.inputs)
        if (id != logits.id && g.tensor(id).dtype == DType::I64 && !logits.shape.empty())
          // logits may be unflattened [N, C, 1, 1]
          r[id] = op.has_attr(Attr::classes) ? op.attr(Attr::classes) : logits.shape.back();
    }
  }
  return r;
}


}  // namespace dlsim
