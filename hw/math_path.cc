#include "hw/math_path.h"

#include <set>

namespace dlsim {
namespace {

bool is_floating(DType t) { return t == DType::F32 || t == DType::BF16 || t == DType::F16; }

}  // namespace

const char* to_string(MathPath p) {
  switch (p) {
    case MathPath::CudaCore: return "cuda-core";
    case MathPath::Tf32: return "tf32";
    case MathPath::Fp16: return "fp16";
    case MathPath::Bf16: return "bf16";
  }
  return "?";
}

bool is_convolution(OpKind k) {
  return k == OpKind::Conv2d || k == OpKind::Conv2dBwdData || k == OpKind::Conv2dBwdFilter;
}

bool is_matrix_op(OpKind k) {
  switch (k) {
    case OpKind::Conv2d:
    case OpKind::Conv2dBwdData:
    case OpKind::Conv2dBwdFilter:
    case OpKind::Linear:
    case OpKind::LinearBwdData:
    case OpKind::LinearBwdWeight:
    case OpKind::MatMul:
    case OpKind::MatMulBwd:
    case OpKind::FlashAttention:
    case OpKind::FlashAttentionBwd:
      return true;
    default:
      return false;
  }
}

DType compute_dtype(const Graph& g, const Op& op) {
  for (TensorId id : op.inputs)
    if (id != kNoTensor && is_floating(g.tensor(id).dtype)) return g.tensor(id).dtype;
  for (TensorId id : op.outputs)
    if (id != kNoTensor && is_floating(g.tensor(id).dtype)) return g.tensor(id).dtype;
  return DType::F32;
}

// Convolutions, linear layers and matrix products carry a TF32 choice, its default PyTorch's
// (workloads/op_attributes.cc: yes for convolutions, no for matrix products); FlashAttention has no fp32
// tensor-core path to choose.
bool tf32_allowed(const Op& op) { return op.declares(Attr::tf32) && op.attr(Attr::tf32) != 0; }

MathPath math_path(const GpuSpec& spec, const Graph& g, const Op& op) {
  if (!is_matrix_op(op.kind)) return MathPath::CudaCore;
  switch (compute_dtype(g, op)) {
    case DType::F16: return spec.peak_fp16 > 0 ? MathPath::Fp16 : MathPath::CudaCore;
    case DType::BF16: return spec.peak_bf16 > 0 ? MathPath::Bf16 : MathPath::CudaCore;
    default: return tf32_allowed(op) && spec.peak_tf32 > 0 ? MathPath::Tf32 : MathPath::CudaCore;
  }
}

double path_peak(const GpuSpec& spec, MathPath p) {
  switch (p) {
    case MathPath::Tf32: return spec.peak_tf32;
    case MathPath::Fp16: return spec.peak_fp16;
    case MathPath::Bf16: return spec.peak_bf16;
    case MathPath::CudaCore: break;
  }
  return spec.peak_fp32;
}

std::vector<std::string> precision_warnings(const GpuSpec& spec, const Graph& g) {
  bool bf16 = false, f16 = false, tf32_asked = false;
  for (const Op& op : g.ops()) {
    if (!is_matrix_op(op.kind)) continue;
    const DType t = compute_dtype(g, op);
    bf16 |= t == DType::BF16;
    f16 |= t == DType::F16;
    // Only a choice someone made: PyTorch's default TF32 for convolutions is no request on a GPU without it.
    tf32_asked |= t == DType::F32 && op.declares(Attr::tf32) && op.has_attr(Attr::tf32) && op.attr(Attr::tf32) != 0;
  }
  std::vector<std::string> w;
  if (bf16 && !(spec.peak_bf16 > 0))
    w.push_back(spec.name + " has no bf16 tensor cores: bf16 convolutions and matrix products run as PyTorch runs "
                "them there, emulated with fp32 arithmetic on the CUDA cores (peak_tflops.fp32); cuDNN may refuse "
                "bf16 convolutions outright on such a GPU");
  if (f16 && !(spec.peak_fp16 > 0))
    w.push_back(spec.name + " has no fp16 tensor cores: fp16 convolutions and matrix products run on the CUDA "
                "cores at the fp32 rate");
  if (tf32_asked && !(spec.peak_tf32 > 0))
    w.push_back(spec.name + " has no TF32 tensor cores: tf32 changes nothing there, fp32 matrix products run on "
                "the CUDA cores (PyTorch's allow_tf32 flags are ignored on such a GPU)");
  return w;
}

}  // namespace dlsim
