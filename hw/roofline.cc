#include "hw/roofline.h"

#include <algorithm>
#include <cmath>

namespace dlsim {
namespace {

// Output elements per thread block of a tensor-core GEMM/conv kernel (a 128x128 tile) and the least part of
// the reduction dimension one split-K slice handles.
constexpr double kTensorTileElems = 128.0 * 128.0;
constexpr double kMinSplitK = 512.0;
// Output elements per block of a PyTorch elementwise kernel (128 threads x 4 elements each).
constexpr double kElementwiseBlockElems = 512.0;

bool is_convolution(OpKind k) {
  return k == OpKind::Conv2d || k == OpKind::Conv2dBwdData || k == OpKind::Conv2dBwdFilter;
}

bool is_floating(DType t) { return t == DType::F32 || t == DType::BF16 || t == DType::F16; }

double element_count(const Tensor& t) {
  double n = 1;
  for (int64_t d : t.shape) n *= static_cast<double>(std::max<int64_t>(d, 1));
  return n;
}

// Elements of the op's first output (its first input when it writes nothing), 1 when it touches no tensor.
double output_elements(const Graph& g, const Op& op) {
  for (TensorId id : op.outputs)
    if (id != kNoTensor) return element_count(g.tensor(id));
  for (TensorId id : op.inputs)
    if (id != kNoTensor) return element_count(g.tensor(id));
  return 1;
}

}  // namespace

bool runs_on_tensor_cores(OpKind k) {
  switch (k) {
    case OpKind::Conv2d:
    case OpKind::Conv2dBwdData:
    case OpKind::Conv2dBwdFilter:
    case OpKind::Linear:
    case OpKind::LinearBwdData:
    case OpKind::LinearBwdWeight:
    case OpKind::MatMul:
    case OpKind::MatMulBwd:
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

double compute_peak(const GpuSpec& spec, const Graph& g, const Op& op) {
  if (!runs_on_tensor_cores(op.kind)) return spec.peak_fp32;
  DType t = compute_dtype(g, op);
  if (t == DType::BF16) return spec.peak_bf16;
  if (t == DType::F16) return spec.peak_fp16;
  return is_convolution(op.kind) ? spec.peak_tf32 : spec.peak_fp32;
}

double sm_fraction(const GpuSpec& spec, const Graph& g, const Op& op) {
  const double sms = static_cast<double>(std::max(spec.sms, 1));
  const double out = output_elements(g, op);
  double blocks;
  if (runs_on_tensor_cores(op.kind)) {
    double tiles = std::ceil(out / kTensorTileElems);
    double k = op.flops > 0 ? op.flops / (2.0 * out) : 1.0;  // reduction length: flops = 2 * out * K
    double max_splits = std::max(1.0, std::floor(k / kMinSplitK));
    double wanted_splits = std::max(1.0, std::ceil(sms / tiles));
    blocks = tiles * std::min(max_splits, wanted_splits);
  } else {
    blocks = std::ceil(out / kElementwiseBlockElems);
  }
  return std::clamp(blocks / sms, 1.0 / sms, 1.0);
}

KernelCost RooflineCostModel::cost(const Graph& g, const Op& op) const {
  KernelCost c;
  c.sm_fraction = sm_fraction(spec_, g, op);
  const double bytes = static_cast<double>(op.bytes_read) + static_cast<double>(op.bytes_written);
  if (op.flops <= 0 && bytes <= 0) {
    c.duration_ns = 0;
    return c;
  }
  const double compute_s = op.flops / (compute_peak(spec_, g, op) * spec_.compute_efficiency);
  const double memory_s = bytes / (spec_.hbm_bandwidth * spec_.memory_efficiency);
  c.duration_ns = static_cast<TimeNs>(std::llround(std::max(compute_s, memory_s) * 1e9)) + spec_.kernel_fixed_ns;
  // Calibration's correction for the op's kind (measured / roofline on the GPU), when it has one.
  if (auto it = spec_.op_class_scale.find(op.kind); it != spec_.op_class_scale.end())
    c.duration_ns = std::max<TimeNs>(1, static_cast<TimeNs>(std::llround(static_cast<double>(c.duration_ns) * it->second)));
  return c;
}

}  // namespace dlsim
