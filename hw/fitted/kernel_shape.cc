#include "hw/fitted/kernel_shape.h"

#include <algorithm>
#include <cmath>

#include "common/strings.h"

namespace dlsim {
namespace {

constexpr KernelFamily kFamilies[] = {
    KernelFamily::ConvFwd, KernelFamily::ConvDgrad,   KernelFamily::ConvWgrad, KernelFamily::Gemm,
    KernelFamily::Bmm,     KernelFamily::SdpaFwd,     KernelFamily::SdpaBwd,   KernelFamily::Elementwise,
    KernelFamily::Reduction, KernelFamily::LayerNorm, KernelFamily::BatchNorm, KernelFamily::MaxPool,
    KernelFamily::AvgPool, KernelFamily::Concat, KernelFamily::MultiTensor,
};
constexpr MathPath kPaths[] = {MathPath::CudaCore, MathPath::Tf32, MathPath::Fp16, MathPath::Bf16};
constexpr ConvVariant kConvVariants[] = {ConvVariant::OneByOne, ConvVariant::Spatial, ConvVariant::Depthwise,
                                         ConvVariant::Grouped, ConvVariant::CudnnDepthwise,
                                         ConvVariant::CudnnDepthwiseGrouped, ConvVariant::FewChannels,
                                         ConvVariant::OneByOneUnaligned, ConvVariant::SpatialUnaligned};
constexpr DType kMemoryTypes[] = {DType::F32, DType::BF16, DType::F16};

bool is_conv_family(KernelFamily f) {
  return f == KernelFamily::ConvFwd || f == KernelFamily::ConvDgrad || f == KernelFamily::ConvWgrad;
}

// "cuda_core", "tf32", ...: MathPath's names with '_' for '-', as class names spell them.
std::string class_path_name(MathPath p) {
  std::string s = to_string(p);
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

// The other 16-bit tensor-core path (the same peak on every GPU that has both), or the path itself.
MathPath other_half(MathPath p) {
  if (p == MathPath::Fp16) return MathPath::Bf16;
  if (p == MathPath::Bf16) return MathPath::Fp16;
  return p;
}

DType other_half(DType t) {
  if (t == DType::F16) return DType::BF16;
  if (t == DType::BF16) return DType::F16;
  return t;
}

std::string compute_class(KernelFamily f, MathPath p, ConvVariant v) {
  std::string s = std::string(to_string(f)) + "." + class_path_name(p);
  if (v != ConvVariant::None) s += std::string(".") + to_string(v);
  return s;
}

// A variant that falls back to its filter's class (1x1 or spatial) where the file has none of its own: a grouped
// convolution (its groups' GEMMs), and the few-channel and unaligned ones, which that class priced before the kinds
// were told apart.
bool falls_back_to_filter_class(ConvVariant v) {
  return v == ConvVariant::Grouped || v == ConvVariant::FewChannels || v == ConvVariant::OneByOneUnaligned ||
         v == ConvVariant::SpatialUnaligned;
}

void push_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

}  // namespace

const char* to_string(KernelFamily f) {
  switch (f) {
    case KernelFamily::ConvFwd: return "conv_fwd";
    case KernelFamily::ConvDgrad: return "conv_dgrad";
    case KernelFamily::ConvWgrad: return "conv_wgrad";
    case KernelFamily::Gemm: return "gemm";
    case KernelFamily::Bmm: return "bmm";
    case KernelFamily::SdpaFwd: return "sdpa_fwd";
    case KernelFamily::SdpaBwd: return "sdpa_bwd";
    case KernelFamily::Elementwise: return "elementwise";
    case KernelFamily::Reduction: return "reduction";
    case KernelFamily::LayerNorm: return "layernorm";
    case KernelFamily::BatchNorm: return "batchnorm";
    case KernelFamily::MaxPool: return "maxpool";
    case KernelFamily::AvgPool: return "avgpool";
    case KernelFamily::Concat: return "concat";
    case KernelFamily::MultiTensor: return "multi_tensor";
  }
  return "?";
}

bool is_pool_family(KernelFamily f) { return f == KernelFamily::MaxPool || f == KernelFamily::AvgPool; }

bool is_memory_family(KernelFamily f) {
  return f == KernelFamily::Elementwise || f == KernelFamily::Reduction || f == KernelFamily::LayerNorm ||
         f == KernelFamily::BatchNorm || is_pool_family(f) || f == KernelFamily::Concat ||
         f == KernelFamily::MultiTensor;
}

const char* to_string(ConvVariant v) {
  switch (v) {
    case ConvVariant::None: return "";
    case ConvVariant::OneByOne: return "1x1";
    case ConvVariant::Spatial: return "spatial";
    case ConvVariant::Depthwise: return "depthwise";
    case ConvVariant::Grouped: return "grouped";
    case ConvVariant::CudnnDepthwise: return "cudnn_depthwise";
    case ConvVariant::CudnnDepthwiseGrouped: return "cudnn_depthwise_grouped";
    case ConvVariant::FewChannels: return "few_channels";
    case ConvVariant::OneByOneUnaligned: return "1x1_unaligned";
    case ConvVariant::SpatialUnaligned: return "spatial_unaligned";
  }
  return "?";
}

double grid_blocks(const TileGrid& g, int sms, double tile, double min_split_k) {
  if (!(g.batch > 0) || !(g.rows > 0) || !(g.cols > 0)) return 0;
  const double tiles = g.batch * std::ceil(g.rows / tile) * std::ceil(g.cols / tile);
  const double max_splits = g.reduction > 0 ? std::max(1.0, std::floor(g.reduction / min_split_k)) : 1.0;
  const double wanted = std::max(1.0, std::ceil(static_cast<double>(std::max(sms, 1)) / tiles));
  return tiles * std::min(max_splits, wanted);
}

double wave_factor(double blocks, int sms) {
  if (!(blocks > 0)) return 1.0;
  const double s = static_cast<double>(std::max(sms, 1));
  return std::ceil(blocks / s) * s / blocks;
}

std::vector<std::string> class_candidates(const KernelShape& s) {
  std::vector<std::string> c;
  if (is_memory_family(s.family)) {
    auto both_halves = [&](KernelFamily f) {  // "<family>.<dtype>", then the other 16-bit type's
      push_unique(c, std::string(to_string(f)) + "." + to_string(s.dtype));
      push_unique(c, std::string(to_string(f)) + "." + to_string(other_half(s.dtype)));
    };
    both_halves(s.family);
    if (is_pool_family(s.family)) both_halves(KernelFamily::Reduction);
    if (s.family == KernelFamily::Concat) both_halves(KernelFamily::Elementwise);  // the copy it was priced as before
    return c;
  }
  if (is_conv_family(s.family) && (s.variant == ConvVariant::Depthwise || s.variant == ConvVariant::CudnnDepthwise ||
                                   s.variant == ConvVariant::CudnnDepthwiseGrouped)) {
    // cuDNN's grouped fallback: then cuDNN's depthwise class, which priced it before the two were told apart.
    std::vector<ConvVariant> order{s.variant};
    if (s.variant == ConvVariant::CudnnDepthwiseGrouped) order.push_back(ConvVariant::CudnnDepthwise);
    order.push_back(s.variant == ConvVariant::Depthwise ? ConvVariant::CudnnDepthwise : ConvVariant::Depthwise);
    for (ConvVariant v : order)
      for (MathPath p : {s.path, other_half(s.path)}) push_unique(c, compute_class(s.family, p, v));
    return c;
  }
  for (MathPath p : {s.path, other_half(s.path)}) {
    if (is_conv_family(s.family)) {
      push_unique(c, compute_class(s.family, p, s.variant));
      if (falls_back_to_filter_class(s.variant))
        push_unique(c, compute_class(s.family, p, s.filter_1x1 ? ConvVariant::OneByOne : ConvVariant::Spatial));
    } else if (s.family == KernelFamily::Bmm) {
      push_unique(c, compute_class(KernelFamily::Bmm, p, ConvVariant::None));
      push_unique(c, compute_class(KernelFamily::Gemm, p, ConvVariant::None));
    } else {
      push_unique(c, compute_class(s.family, p, ConvVariant::None));
    }
  }
  return c;
}

bool is_kernel_class_name(const std::string& name, std::string& why) {
  std::vector<std::string> valid;
  for (KernelFamily f : kFamilies) {
    if (is_memory_family(f)) {
      for (DType t : kMemoryTypes) valid.push_back(std::string(to_string(f)) + "." + to_string(t));
    } else if (is_conv_family(f)) {
      for (MathPath p : kPaths)
        for (ConvVariant v : kConvVariants) valid.push_back(compute_class(f, p, v));
    } else {
      for (MathPath p : kPaths) valid.push_back(compute_class(f, p, ConvVariant::None));
    }
  }
  if (std::find(valid.begin(), valid.end(), name) != valid.end()) return true;
  why = "not a kernel class: expected <family>.<path>[.<variant>] for the compute families (conv_fwd, conv_dgrad, "
        "conv_wgrad with a variant 1x1, spatial, depthwise, grouped, cudnn_depthwise, "
        "cudnn_depthwise_grouped, few_channels, 1x1_unaligned or spatial_unaligned; gemm, bmm, sdpa_fwd, "
        "sdpa_bwd; paths cuda_core, tf32, fp16, bf16) or <family>.<dtype> for the memory-bound ones (elementwise, "
        "reduction, layernorm, batchnorm, maxpool, avgpool, concat, multi_tensor; f32, bf16, f16), e.g. conv_fwd.tf32.spatial, "
        "gemm.bf16, layernorm.f32";
  return false;
}

}  // namespace dlsim
