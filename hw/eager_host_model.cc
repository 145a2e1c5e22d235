#include "hw/eager_host_model.h"

namespace dlsim {

const char* to_string(HostOpClass c) {
  switch (c) {
    case HostOpClass::Conv: return "conv";
    case HostOpClass::Matmul: return "matmul";
    case HostOpClass::Norm: return "norm";
    case HostOpClass::Elementwise: return "elementwise";
    case HostOpClass::View: return "view";
  }
  return "?";
}

// No default: a new kind must be placed here (the compiler names a missing one).
HostOpClass host_op_class(OpKind k) {
  switch (k) {
    case OpKind::Conv2d:
    case OpKind::Conv2dBwdData:
    case OpKind::Conv2dBwdFilter: return HostOpClass::Conv;
    case OpKind::Linear:
    case OpKind::MatMul:
    case OpKind::FlashAttention:
    case OpKind::LinearBwdData:
    case OpKind::LinearBwdWeight:
    case OpKind::MatMulBwd:
    case OpKind::FlashAttentionBwd: return HostOpClass::Matmul;
    case OpKind::BatchNorm:
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
    case OpKind::BatchNormBwd:
    case OpKind::LayerNormBwd:
    case OpKind::RmsNormBwd: return HostOpClass::Norm;
    case OpKind::Flatten:
    case OpKind::Reshape: return HostOpClass::View;
    case OpKind::Relu:
    case OpKind::Relu6:
    case OpKind::MaxPool:
    case OpKind::AvgPool:
    case OpKind::GlobalAvgPool:
    case OpKind::AdaptiveAvgPool:
    case OpKind::Add:
    case OpKind::Mul:
    case OpKind::Concat:
    case OpKind::Transpose:
    case OpKind::Dropout:
    case OpKind::Pad:
    case OpKind::Softmax:
    case OpKind::Gelu:
    case OpKind::Embedding:
    case OpKind::CrossEntropyLoss:
    case OpKind::Rotary:
    case OpKind::RepeatKv:
    case OpKind::Silu:
    case OpKind::ReluBwd:
    case OpKind::MaxPoolBwd:
    case OpKind::AvgPoolBwd:
    case OpKind::MulBwd:
    case OpKind::ConcatBwd:
    case OpKind::DropoutBwd:
    case OpKind::PadBwd:
    case OpKind::SoftmaxBwd:
    case OpKind::GeluBwd:
    case OpKind::EmbeddingBwd:
    case OpKind::CrossEntropyLossBwd:
    case OpKind::GradAccumulate:
    case OpKind::RotaryBwd:
    case OpKind::RepeatKvBwd:
    case OpKind::SiluBwd:
    case OpKind::SgdMomentumUpdate:
    case OpKind::AdamUpdate:
    case OpKind::ZeroGrad:
    case OpKind::Copy:
    case OpKind::Other: return HostOpClass::Elementwise;
    // A c10d collective's host call (ProcessGroupNCCL: the work object, its events, the NCCL enqueue) has not been
    // measured; it is charged as an elementwise op's dispatch until a multi-GPU machine measures it.
    case OpKind::AllReduce:
    case OpKind::AllGather:
    case OpKind::ReduceScatter:
    case OpKind::Broadcast: return HostOpClass::Elementwise;
  }
  return HostOpClass::Elementwise;
}

namespace {

size_t eager_host_slot(HostOpClass c) { return static_cast<size_t>(c); }

bool eager_host_learnable(const Graph& g, TensorId t) { return t != kNoTensor && g.tensor(t).learnable; }

}  // namespace

EagerHostCharges eager_host_charges(const EagerHostSpec& s, const Graph& g) {
  const size_t n = g.ops().size();
  EagerHostCharges out;
  out.issue_ns.assign(n, 0);
  out.once_ns.assign(n, 0);
  // Per forward op: its backward node has started (its first op paid the node; the others are further kernels).
  std::vector<uint8_t> node_started(n, 0);
  // Per tensor: a parameter whose .grad AccumulateGrad has stored this step (charged once, at its first writer).
  std::vector<uint8_t> grad_stored(g.tensors().size(), 0);
  bool seen_backward = false, seen_optimizer = false;
  for (const Op& op : g.ops()) {
    const auto i = static_cast<size_t>(op.id);
    const HostOpClass cls = host_op_class(op.kind);
    TimeNs c = 0;
    if (op.kind == OpKind::Transpose && op.has_attr(Attr::layout_transpose)) {
      c = s.extra_kernel_ns;  // cuDNN's own transpose, launched inside the convolution's call
    } else if (op.phase == Phase::Forward) {
      c = s.forward_ns[eager_host_slot(cls)];
      // BatchNorm2d.forward in training also runs num_batches_tracked.add_(1): one more elementwise op.
      if (op.kind == OpKind::BatchNorm) c += s.forward_ns[eager_host_slot(HostOpClass::Elementwise)];
    } else if (op.phase == Phase::Backward) {
      if (op.kind == OpKind::GradAccumulate) {
        c = s.grad_accumulate_ns;
      } else if (op.forward_op >= 0 && node_started[static_cast<size_t>(op.forward_op)]) {
        c = s.extra_kernel_ns;
      } else {
        c = s.backward_ns[eager_host_slot(cls)];
        if (op.forward_op >= 0) node_started[static_cast<size_t>(op.forward_op)] = 1;
      }
      for (TensorId t : op.outputs) {
        const Tensor& tt = g.tensor(t);
        if (tt.kind != TensorKind::Gradient || !eager_host_learnable(g, tt.grad_of)) continue;
        if (grad_stored[static_cast<size_t>(tt.grad_of)]) continue;
        grad_stored[static_cast<size_t>(tt.grad_of)] = 1;
        c += s.param_grad_ns;
      }
      if (!seen_backward) out.once_ns[i] += s.backward_start_ns;
      seen_backward = true;
    } else {
      TimeNs params = 0;
      for (TensorId t : op.outputs) params += eager_host_learnable(g, t) ? 1 : 0;
      // An optimizer-phase op that updates no parameter (AMP's unscale of the gradients): one foreach kernel.
      c = params > 0 ? params * s.optimizer_tensor_ns : s.extra_kernel_ns;
      if (!seen_optimizer) out.once_ns[i] += s.optimizer_step_ns;
      seen_optimizer = true;
    }
    out.issue_ns[i] = c;
  }
  return out;
}

}  // namespace dlsim
