#include "hw/fitted/conv_backend.h"

#include <catch2/catch.hpp>

#include "hw/fitted/op_kernel_shapes.h"

using namespace dlsim;

namespace {

ConvSizes depthwise(int64_t n, int64_t c, int64_t hw, int64_t filter, int64_t stride) {
  ConvSizes z;
  z.n = n, z.c = z.k = z.groups = c, z.h = z.w = hw, z.r = z.s = filter;
  z.stride_h = z.stride_w = stride, z.pad_h = z.pad_w = filter / 2;
  return z;
}

}  // namespace

TEST_CASE("depthwise convolutions: PyTorch's own kernels for NCHW fp32 and bf16, of any filter") {
  // MobileNet-V3's and EfficientNet's 3x3 and 5x5 layers as the 2026-11-28 H200 traces ran them (conv_depthwise2d).
  for (int64_t filter : {3, 5, 7})
    for (MathPath p : {MathPath::Tf32, MathPath::CudaCore, MathPath::Bf16}) {
      INFO("filter " << filter << " path " << to_string(p));
      CHECK(conv_library(depthwise(64, 960, 7, filter, 1), p) == ConvLibrary::TorchDepthwise);
      CHECK(conv_kernel_shape(KernelFamily::ConvWgrad, depthwise(64, 960, 7, filter, 1), p, 4).variant ==
            ConvVariant::Depthwise);
    }
}

TEST_CASE("depthwise convolutions: cuDNN for channels_last of any dtype") {
  // ConvNeXt-T's 7x7 layers: NHWC-strided through the permutes, run in cuDNN.
  ConvSizes z = depthwise(32, 768, 7, 7, 1);
  z.channels_last = true;
  CHECK(conv_library(z, MathPath::Tf32) == ConvLibrary::Cudnn);
  CHECK(conv_library(z, MathPath::Bf16) == ConvLibrary::Cudnn);
  // And no transposes: cuDNN runs it in the tensors' own layout.
  CHECK(conv_layout_transposes(KernelFamily::ConvWgrad, z, MathPath::Tf32, 4).empty());
}

TEST_CASE("cuDNN's fp32 7x7 depthwise weight gradient runs in its grouped kernels, the rest in depthwise ones") {
  // What the H200 traces of ConvNeXt-T (cuDNN 9.19, fp32, results/fidelity/data/h200-2026-11-28c/traces.tar) ran
  // for its four stages' 7x7 depthwise layers [32, C, H, W]: forward conv2d_c1_k1_nhwc and backward-data
  // dgrad2d_c1_k1_nhwc_specialized every time, the weight gradient sm80_xmma_wgrad_implicit_gemm_indexed_..._g16
  // (96x56x56, 192x28x28) or wgrad2d_grouped_direct_kernel (384x14x14, 768x7x7).
  for (auto [c, hw] : {std::pair<int64_t, int64_t>{96, 56}, {192, 28}, {384, 14}, {768, 7}}) {
    ConvSizes z = depthwise(32, c, hw, 7, 1);
    z.channels_last = true;
    INFO("channels " << c);
    for (MathPath p : {MathPath::Tf32, MathPath::CudaCore}) {
      CHECK(conv_variant(KernelFamily::ConvFwd, z, p) == ConvVariant::CudnnDepthwise);
      CHECK(conv_variant(KernelFamily::ConvDgrad, z, p) == ConvVariant::CudnnDepthwise);
      CHECK(conv_variant(KernelFamily::ConvWgrad, z, p) == ConvVariant::CudnnDepthwiseGrouped);
    }
    // fp16 NHWC: cuDNN has depthwise wgrad kernels of 7x7 filters (kernels-grouped.json: 3.3-9.6 TFLOP/s where
    // fp32 takes 0.31-0.41).
    CHECK(conv_variant(KernelFamily::ConvWgrad, z, MathPath::Fp16) == ConvVariant::CudnnDepthwise);
  }
  // The sweep and the simulated op name the same class, the split's fallback first cuDNN's depthwise class.
  ConvSizes z = depthwise(32, 768, 7, 7, 1);
  z.channels_last = true;
  const KernelShape s = conv_kernel_shape(KernelFamily::ConvWgrad, z, MathPath::Tf32, 4);
  CHECK(s.variant == ConvVariant::CudnnDepthwiseGrouped);
  CHECK(class_candidates(s) == std::vector<std::string>{"conv_wgrad.tf32.cudnn_depthwise_grouped",
                                                        "conv_wgrad.tf32.cudnn_depthwise",
                                                        "conv_wgrad.tf32.depthwise"});
  CHECK(class_candidates(conv_kernel_shape(KernelFamily::ConvFwd, z, MathPath::Tf32, 4)) ==
        std::vector<std::string>{"conv_fwd.tf32.cudnn_depthwise", "conv_fwd.tf32.depthwise"});
  // The 3x3 and 5x5 fp32 NHWC weight gradients of MobileNet-V3 and EfficientNet-B0 (0.94-5.1 TFLOP/s in the same
  // sweep, those of 100 MFLOP or more) keep cuDNN's depthwise class, strided or not.
  for (auto [filter, stride] : {std::pair<int64_t, int64_t>{3, 1}, {3, 2}, {5, 1}, {5, 2}}) {
    ConvSizes m = depthwise(64, 672, 14, filter, stride);
    m.channels_last = true;
    INFO("filter " << filter << " stride " << stride);
    CHECK(conv_variant(KernelFamily::ConvWgrad, m, MathPath::Tf32) == ConvVariant::CudnnDepthwise);
  }
  // An oblong filter has no square depthwise kernel either; PyTorch's own kernels are untouched by the split.
  ConvSizes oblong = depthwise(32, 64, 28, 3, 1);
  oblong.s = 7, oblong.channels_last = true;
  CHECK(conv_variant(KernelFamily::ConvWgrad, oblong, MathPath::Tf32) == ConvVariant::CudnnDepthwiseGrouped);
  CHECK(conv_variant(KernelFamily::ConvWgrad, depthwise(32, 768, 7, 7, 1), MathPath::Tf32) ==
        ConvVariant::Depthwise);
}

TEST_CASE("depthwise convolutions in fp16 NCHW: cuDNN where PyTorch's workload check says so") {
  // Stride 1 of a 1x1, 3x3 or 5x5 filter, at least 32 channels and width 7: cuDNN.
  CHECK(conv_library(depthwise(32, 64, 56, 3, 1), MathPath::Fp16) == ConvLibrary::Cudnn);
  CHECK(conv_library(depthwise(32, 64, 56, 5, 1), MathPath::Fp16) == ConvLibrary::Cudnn);
  CHECK(conv_library(depthwise(32, 16, 112, 3, 1), MathPath::Fp16) == ConvLibrary::TorchDepthwise);  // < 32 ch
  CHECK(conv_library(depthwise(32, 64, 56, 7, 1), MathPath::Fp16) == ConvLibrary::TorchDepthwise);   // 7x7
  CHECK(conv_library(depthwise(32, 64, 4, 3, 1), MathPath::Fp16) == ConvLibrary::TorchDepthwise);    // width 4
  // Stride 2: only many channels, or 256 on wide maps.
  CHECK(conv_library(depthwise(32, 144, 56, 3, 2), MathPath::Fp16) == ConvLibrary::TorchDepthwise);
  CHECK(conv_library(depthwise(32, 256, 28, 3, 2), MathPath::Fp16) == ConvLibrary::Cudnn);
  CHECK(conv_library(depthwise(32, 512, 14, 5, 2), MathPath::Fp16) == ConvLibrary::Cudnn);
  CHECK(conv_library(depthwise(1, 144, 56, 3, 2), MathPath::Fp16) == ConvLibrary::Cudnn);  // batch 1
  ConvSizes dilated = depthwise(32, 64, 56, 3, 1);
  dilated.dilation = 2;
  CHECK(conv_library(dilated, MathPath::Fp16) == ConvLibrary::TorchDepthwise);
  ConvSizes oblong = depthwise(32, 64, 56, 3, 1);
  oblong.stride_w = 2;
  CHECK(conv_library(oblong, MathPath::Fp16) == ConvLibrary::TorchDepthwise);
}

TEST_CASE("grouped convolutions: cuDNN, with its NCHW<->NHWC transposes in fp32 NCHW") {
  // ResNeXt-50's 3x3 layer of 32 groups: x [32, 128, 56, 56], w [128, 4, 3, 3], y [32, 128, 56, 56].
  ConvSizes z;
  z.n = 32, z.c = z.k = 128, z.h = z.w = 56, z.r = z.s = 3, z.pad_h = z.pad_w = 1, z.groups = 32;
  CHECK(!is_depthwise_conv(z));
  CHECK(conv_library(z, MathPath::Tf32) == ConvLibrary::Cudnn);
  const double x = 32.0 * 128 * 56 * 56, w = 128.0 * 4 * 9;
  const auto fwd = conv_layout_transposes(KernelFamily::ConvFwd, z, MathPath::Tf32, 4);
  REQUIRE(fwd.size() == 3);
  for (const KernelShape& t : fwd) {
    CHECK(t.family == KernelFamily::Elementwise);
    CHECK(t.dtype == DType::F32);
  }
  CHECK(fwd[0].bytes == 2 * x * 4);  // x to NHWC, read and written
  CHECK(fwd[1].bytes == 2 * w * 4);  // the filter
  CHECK(fwd[2].bytes == 2 * x * 4);  // y back (same size here)
  const auto wgrad = conv_layout_transposes(KernelFamily::ConvWgrad, z, MathPath::Tf32, 4);
  REQUIRE(wgrad.size() == 3);
  CHECK(wgrad[2].bytes == 2 * w * 4);  // dw back to KCRS
  CHECK(conv_layout_transposes(KernelFamily::ConvDgrad, z, MathPath::CudaCore, 4).size() == 3);
  // None channels_last, none for 16-bit (the memory-format pass's own Transpose ops), none ungrouped.
  ConvSizes cl = z;
  cl.channels_last = true;
  CHECK(conv_layout_transposes(KernelFamily::ConvFwd, cl, MathPath::Tf32, 4).empty());
  CHECK(conv_layout_transposes(KernelFamily::ConvFwd, z, MathPath::Bf16, 2).empty());
  ConvSizes dense = z;
  dense.groups = 1;
  CHECK(conv_layout_transposes(KernelFamily::ConvFwd, dense, MathPath::Tf32, 4).empty());
}

TEST_CASE("fewer than 8 input channels: a few-channel convolution of any filter, its filter's class the fallback") {
  // AlexNet's first layer: x [128, 3, 224, 224], w [64, 3, 11, 11], stride 4, padding 2.
  ConvSizes z;
  z.n = 128, z.c = 3, z.k = 64, z.h = z.w = 224, z.r = z.s = 11, z.stride_h = z.stride_w = 4, z.pad_h = z.pad_w = 2;
  for (KernelFamily pass : {KernelFamily::ConvFwd, KernelFamily::ConvDgrad, KernelFamily::ConvWgrad})
    CHECK(conv_variant(pass, z, MathPath::Tf32) == ConvVariant::FewChannels);
  const KernelShape s = conv_kernel_shape(KernelFamily::ConvFwd, z, MathPath::Tf32, 4);
  CHECK(class_candidates(s) == std::vector<std::string>{"conv_fwd.tf32.few_channels", "conv_fwd.tf32.spatial"});
  ConvSizes one = z;
  one.r = one.s = 1;
  CHECK(class_candidates(conv_kernel_shape(KernelFamily::ConvWgrad, one, MathPath::Fp16, 2)) ==
        std::vector<std::string>{"conv_wgrad.fp16.few_channels", "conv_wgrad.fp16.1x1", "conv_wgrad.bf16.few_channels",
                                 "conv_wgrad.bf16.1x1"});
  // Eight channels are a tensor-core step: a spatial convolution (of an unaligned 55x55 output plane here); a grouped
  // one of few channels per group stays grouped.
  ConvSizes eight = z;
  eight.c = 8;
  CHECK(conv_variant(KernelFamily::ConvFwd, eight, MathPath::Tf32) == ConvVariant::SpatialUnaligned);
  ConvSizes grouped = z;
  grouped.c = 6, grouped.groups = 2;
  CHECK(conv_variant(KernelFamily::ConvFwd, grouped, MathPath::Tf32) == ConvVariant::Grouped);
}

TEST_CASE("a convolution's bias: cuDNN's result gets an add, every backward a sum of the output's gradient") {
  // VGG-16's first layer: x [32, 3, 224, 224], w [64, 3, 3, 3], y [32, 64, 224, 224].
  ConvSizes z;
  z.n = 32, z.c = 3, z.k = 64, z.h = z.w = 224, z.r = z.s = 3, z.pad_h = z.pad_w = 1;
  const double y = 32.0 * 64 * 224 * 224;
  const auto add = conv_bias_kernels(KernelFamily::ConvFwd, z, MathPath::Tf32, DType::F32);
  REQUIRE(add.size() == 1);
  CHECK(add[0].family == KernelFamily::Elementwise);
  CHECK(add[0].dtype == DType::F32);
  CHECK(add[0].bytes == (2 * y + 64) * 4);  // the output read and written, the bias read
  const auto sum = conv_bias_kernels(KernelFamily::ConvWgrad, z, MathPath::Bf16, DType::BF16);
  REQUIRE(sum.size() == 1);
  CHECK(sum[0].family == KernelFamily::Reduction);
  CHECK(sum[0].dtype == DType::BF16);
  CHECK(sum[0].bytes == (y + 64) * 2);  // dy read, db written
  CHECK(conv_bias_kernels(KernelFamily::ConvDgrad, z, MathPath::Tf32, DType::F32).empty());
  // PyTorch's own depthwise kernels add the bias inside theirs; their backward still sums it apart.
  const ConvSizes dw = depthwise(32, 96, 56, 3, 1);
  REQUIRE(conv_library(dw, MathPath::Tf32) == ConvLibrary::TorchDepthwise);
  CHECK(conv_bias_kernels(KernelFamily::ConvFwd, dw, MathPath::Tf32, DType::F32).empty());
  CHECK(conv_bias_kernels(KernelFamily::ConvWgrad, dw, MathPath::Tf32, DType::F32).size() == 1);
}

TEST_CASE("fp32 NCHW planes not a multiple of 4 elements: unaligned convolutions, their filter's class the fallback") {
  // Inception-v3's 1x1 layer at 35x35: x [32, 288, 35, 35], w [64, 288, 1, 1].
  ConvSizes z;
  z.n = 32, z.c = 288, z.k = 64, z.h = z.w = 35;
  for (KernelFamily pass : {KernelFamily::ConvFwd, KernelFamily::ConvDgrad, KernelFamily::ConvWgrad})
    CHECK(conv_variant(pass, z, MathPath::Tf32) == ConvVariant::OneByOneUnaligned);
  CHECK(class_candidates(conv_kernel_shape(KernelFamily::ConvDgrad, z, MathPath::Tf32, 4)) ==
        std::vector<std::string>{"conv_dgrad.tf32.1x1_unaligned", "conv_dgrad.tf32.1x1"});
  ConvSizes spatial = z;
  spatial.r = spatial.s = 3, spatial.pad_h = spatial.pad_w = 1;
  CHECK(conv_variant(KernelFamily::ConvWgrad, spatial, MathPath::CudaCore) == ConvVariant::SpatialUnaligned);
  // An aligned input whose output plane is not (56x56 by a 3x3 filter at stride 2, no padding: 27x27).
  ConvSizes strided = spatial;
  strided.h = strided.w = 56, strided.stride_h = strided.stride_w = 2, strided.pad_h = strided.pad_w = 0;
  CHECK(conv_variant(KernelFamily::ConvFwd, strided, MathPath::Tf32) == ConvVariant::SpatialUnaligned);
  // Aligned planes (28x28, 14x14 at stride 2), channels_last activations and 16-bit paths keep the plain classes.
  ConvSizes aligned = spatial;
  aligned.h = aligned.w = 28, aligned.stride_h = aligned.stride_w = 2;
  CHECK(conv_variant(KernelFamily::ConvFwd, aligned, MathPath::Tf32) == ConvVariant::Spatial);
  ConvSizes nhwc = z;
  nhwc.channels_last = true;
  CHECK(conv_variant(KernelFamily::ConvFwd, nhwc, MathPath::Tf32) == ConvVariant::OneByOne);
  CHECK(conv_variant(KernelFamily::ConvFwd, z, MathPath::Fp16) == ConvVariant::OneByOne);
  CHECK(conv_variant(KernelFamily::ConvFwd, z, MathPath::Bf16) == ConvVariant::OneByOne);
}
