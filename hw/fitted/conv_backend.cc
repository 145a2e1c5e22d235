#include "hw/fitted/conv_backend.h"

namespace dlsim {
namespace {

// check_cudnn_depthwise_workload_with_filter (cuDNN >= 8.2): which fp16 NCHW depthwise shapes PyTorch measured to
// run faster in cuDNN than in its own kernels.
bool cudnn_depthwise_workload(const ConvSizes& z) {
  if (z.h == 1 && z.stride_w == 1) return true;  // a 1-D convolution
  if (z.r != z.s) return false;
  const int64_t filter = z.s;
  if (filter != 1 && filter != 3 && filter != 5) return false;
  if (z.w < 7) return false;
  if (z.stride_w == 1) return true;
  if (z.stride_w != 2) return false;
  if (z.n == 1) return filter != 1 || z.w <= 28;
  if (filter == 1) return z.n <= 16 && z.c >= 128 && z.w <= 7;
  return z.c >= 512 || (z.c >= 256 && z.w >= 28);
}

KernelShape transpose_shape(double elements, uint32_t element_bytes) {
  KernelShape s;
  s.family = KernelFamily::Elementwise;
  s.dtype = element_bytes == 2 ? DType::F16 : DType::F32;
  s.bytes = 2.0 * elements * element_bytes;  // read once, written once in the other layout
  return s;
}

// fp32 data, on the TF32 tensor cores or the CUDA cores (where cuDNN's fp32 kernels differ from its 16-bit ones).
bool fp32_path(MathPath path) { return path == MathPath::CudaCore || path == MathPath::Tf32; }

// Fewer input channels than one k step of a TF32 tensor-core MMA (m16n8k8) or one 16-byte load of 16-bit elements:
// an ungrouped convolution of fewer runs cuDNN's few-channel kernels (ConvVariant::FewChannels).
constexpr int64_t kFewChannels = 8;

// An fp32 NCHW image plane (H x W) cuDNN's tensor-core kernels read in 16-byte vectors: 4 elements.
constexpr int64_t kPlaneAlignment = 4;

// The input's or the output's plane is not a whole number of 16-byte vectors (35x35, 17x17, 55x55, 7x7).
bool unaligned_planes(const ConvSizes& z) {
  return (z.h * z.w) % kPlaneAlignment != 0 || (z.out_h() * z.out_w()) % kPlaneAlignment != 0;
}

}  // namespace

bool is_depthwise_conv(const ConvSizes& z) { return z.groups > 1 && z.groups == z.c && z.k % z.c == 0; }

ConvLibrary conv_library(const ConvSizes& z, MathPath path) {
  if (!is_depthwise_conv(z)) return ConvLibrary::Cudnn;
  if (z.channels_last) return ConvLibrary::Cudnn;
  const bool fp16_eligible = path == MathPath::Fp16 && z.dilation == 1 &&
                             (z.stride_h == z.stride_w || z.h == 1) && z.c >= 32;
  return fp16_eligible && cudnn_depthwise_workload(z) ? ConvLibrary::Cudnn : ConvLibrary::TorchDepthwise;
}

ConvVariant conv_variant(KernelFamily pass, const ConvSizes& z, MathPath path) {
  if (z.groups == 1 && z.c < kFewChannels) return ConvVariant::FewChannels;
  const bool one_by_one = z.r == 1 && z.s == 1;
  if (z.groups == 1 && fp32_path(path) && !z.channels_last && unaligned_planes(z))
    return one_by_one ? ConvVariant::OneByOneUnaligned : ConvVariant::SpatialUnaligned;
  if (z.groups == 1) return one_by_one ? ConvVariant::OneByOne : ConvVariant::Spatial;
  if (!is_depthwise_conv(z)) return ConvVariant::Grouped;
  if (conv_library(z, path) == ConvLibrary::TorchDepthwise) return ConvVariant::Depthwise;
  const bool depthwise_wgrad_kernel = z.r == z.s && z.r <= 5;
  if (pass == KernelFamily::ConvWgrad && fp32_path(path) && !depthwise_wgrad_kernel)
    return ConvVariant::CudnnDepthwiseGrouped;
  return ConvVariant::CudnnDepthwise;
}

std::vector<KernelShape> conv_layout_transposes(KernelFamily pass, const ConvSizes& z, MathPath path,
                                                uint32_t element_bytes) {
  if (!fp32_path(path) || z.channels_last || z.groups <= 1 || is_depthwise_conv(z)) return {};
  const double x = static_cast<double>(z.n * z.c * z.h * z.w);
  const double w = static_cast<double>(z.k * (z.c / z.groups) * z.r * z.s);
  const double y = static_cast<double>(z.n * z.k * z.out_h() * z.out_w());
  // The two operands to NHWC, the result back: forward x, w -> y; backward-data dy, w -> dx; backward-filter
  // dy, x -> dw.
  switch (pass) {
    case KernelFamily::ConvFwd:
      return {transpose_shape(x, element_bytes), transpose_shape(w, element_bytes), transpose_shape(y, element_bytes)};
    case KernelFamily::ConvDgrad:
      return {transpose_shape(y, element_bytes), transpose_shape(w, element_bytes), transpose_shape(x, element_bytes)};
    case KernelFamily::ConvWgrad:
      return {transpose_shape(y, element_bytes), transpose_shape(x, element_bytes), transpose_shape(w, element_bytes)};
    default: return {};
  }
}

std::vector<KernelShape> conv_bias_kernels(KernelFamily pass, const ConvSizes& z, MathPath path, DType dtype) {
  if (pass == KernelFamily::ConvFwd && conv_library(z, path) != ConvLibrary::Cudnn) return {};
  if (pass != KernelFamily::ConvFwd && pass != KernelFamily::ConvWgrad) return {};
  const double y = static_cast<double>(z.n * z.k * z.out_h() * z.out_w()), b = static_cast<double>(z.k);
  KernelShape s;
  s.family = pass == KernelFamily::ConvFwd ? KernelFamily::Elementwise : KernelFamily::Reduction;
  s.dtype = dtype;
  // The add reads the output and the bias and writes the output; the sum reads the output's gradient and writes the
  // bias's.
  s.bytes = ((pass == KernelFamily::ConvFwd ? 2.0 : 1.0) * y + b) * dtype_bytes(dtype);
  return {s};
}

}  // namespace dlsim
