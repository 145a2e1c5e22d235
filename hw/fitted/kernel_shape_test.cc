#include "hw/fitted/kernel_shape.h"

#include <catch2/catch.hpp>

#include "hw/fitted/op_kernel_shapes.h"

using namespace dlsim;

TEST_CASE("wave quantisation: a partial last wave costs a whole one") {
  CHECK(wave_factor(132, 132) == 1.0);
  CHECK(wave_factor(264, 132) == 1.0);
  CHECK(wave_factor(133, 132) == Approx(264.0 / 133.0));  // two waves for 133 blocks
  CHECK(wave_factor(66, 132) == Approx(2.0));             // half the SMs idle: twice the ideal time
  CHECK(wave_factor(0, 132) == 1.0);                       // no grid: no wave term
  for (double b = 1; b < 1000; b += 7) CHECK(wave_factor(b, 132) >= 1.0);
}

TEST_CASE("tiles of the output, split along the reduction only to fill the SMs") {
  // 1024 x 1024 outputs in 128 x 128 tiles: 64 tiles; 132 SMs want ceil(132 / 64) = 3 slices of the
  // reduction, K = 4096 allows 8 of 512: 192 blocks.
  CHECK(grid_blocks({1, 1024, 1024, 4096}, 132, 128, 512) == 192);
  CHECK(grid_blocks({1, 1024, 1024, 256}, 132, 128, 512) == 64);   // K too short to split
  CHECK(grid_blocks({1, 4096, 4096, 4096}, 132, 128, 512) == 1024); // enough tiles: no split
  CHECK(grid_blocks({8, 100, 100, 0}, 132, 128, 512) == 8);         // batched, never split
  CHECK(grid_blocks({0, 100, 100, 100}, 132, 128, 512) == 0);
}

TEST_CASE("class names: the best class first, then what stands in for it") {
  ConvSizes z;
  z.n = 8, z.c = 64, z.h = 56, z.w = 56, z.k = 64, z.r = 3, z.s = 3, z.pad_h = z.pad_w = 1;
  KernelShape spatial = conv_kernel_shape(KernelFamily::ConvFwd, z, MathPath::Bf16, 2);
  CHECK(class_candidates(spatial) == std::vector<std::string>{"conv_fwd.bf16.spatial", "conv_fwd.fp16.spatial"});
  z.groups = 64;
  // PyTorch's own depthwise kernel (fp32 NCHW), then cuDNN's depthwise class.
  CHECK(class_candidates(conv_kernel_shape(KernelFamily::ConvWgrad, z, MathPath::Tf32, 4)) ==
        std::vector<std::string>{"conv_wgrad.tf32.depthwise", "conv_wgrad.tf32.cudnn_depthwise"});
  // fp16 NHWC (a sweep's records, a 16-bit graph's transposed operands): cuDNN's, then the other 16-bit type's.
  z.channels_last = true;
  CHECK(class_candidates(conv_kernel_shape(KernelFamily::ConvFwd, z, MathPath::Fp16, 2)) ==
        std::vector<std::string>{"conv_fwd.fp16.cudnn_depthwise", "conv_fwd.bf16.cudnn_depthwise",
                                 "conv_fwd.fp16.depthwise", "conv_fwd.bf16.depthwise"});
  z.channels_last = false;
  z.groups = 4, z.r = z.s = 1, z.pad_h = z.pad_w = 0;
  CHECK(class_candidates(conv_kernel_shape(KernelFamily::ConvDgrad, z, MathPath::Tf32, 4)) ==
        std::vector<std::string>{"conv_dgrad.tf32.grouped", "conv_dgrad.tf32.1x1"});
  CHECK(class_candidates(gemm_kernel_shape(12, 128, 128, 64, MathPath::Fp16, 2)) ==
        std::vector<std::string>{"bmm.fp16", "gemm.fp16", "bmm.bf16", "gemm.bf16"});
  CHECK(class_candidates(gemm_kernel_shape(1, 128, 128, 64, MathPath::CudaCore, 4)) ==
        std::vector<std::string>{"gemm.cuda_core"});
  KernelShape ln;
  ln.family = KernelFamily::LayerNorm;
  ln.dtype = DType::F16;
  CHECK(class_candidates(ln) == std::vector<std::string>{"layernorm.f16", "layernorm.bf16"});
  // A windowed pool: its own family, then the reduction class that priced pools before they had one.
  KernelShape pool;
  pool.family = KernelFamily::MaxPool;
  CHECK(class_candidates(pool) == std::vector<std::string>{"maxpool.f32", "reduction.f32"});
  KernelShape cat;  // a concatenation without a class of its own: the elementwise copy it was priced as before
  cat.family = KernelFamily::Concat;
  cat.dtype = DType::BF16;
  CHECK(class_candidates(cat) ==
        std::vector<std::string>{"concat.bf16", "concat.f16", "elementwise.bf16", "elementwise.f16"});
  std::string why;
  for (const char* name : {"conv_fwd.tf32.spatial", "conv_wgrad.tf32.cudnn_depthwise",
                           "conv_wgrad.tf32.cudnn_depthwise_grouped", "gemm.cuda_core", "sdpa_bwd.bf16", "batchnorm.f32",
                           "maxpool.f32", "avgpool.bf16", "concat.f32"})
    CHECK(is_kernel_class_name(name, why));
  CHECK_FALSE(is_kernel_class_name("conv_fwd.tf32", why));  // a convolution needs its variant
  CHECK_FALSE(is_kernel_class_name("gemm.float32", why));
  CHECK(why.find("conv_fwd.tf32.spatial") != std::string::npos);
}

TEST_CASE("a convolution's three passes: the same FLOPs and bytes, each its own implicit GEMM") {
  ConvSizes z;
  z.n = 32, z.c = 64, z.h = 56, z.w = 56, z.k = 128, z.r = 3, z.s = 3, z.stride_h = z.stride_w = 2;
  z.pad_h = z.pad_w = 1;
  const KernelShape f = conv_kernel_shape(KernelFamily::ConvFwd, z, MathPath::Tf32, 4);
  const KernelShape d = conv_kernel_shape(KernelFamily::ConvDgrad, z, MathPath::Tf32, 4);
  const KernelShape w = conv_kernel_shape(KernelFamily::ConvWgrad, z, MathPath::Tf32, 4);
  CHECK(z.out_h() == 28);
  CHECK(f.flops == 2.0 * 32 * 128 * 28 * 28 * 64 * 9);
  CHECK(d.flops == f.flops);
  CHECK(w.flops == f.flops);
  CHECK(f.bytes == (32.0 * 64 * 56 * 56 + 128 * 64 * 9 + 32.0 * 128 * 28 * 28) * 4);
  CHECK(f.grid.rows == 32 * 28 * 28);
  CHECK(f.grid.reduction == 64 * 9);
  CHECK(d.grid.rows == 32 * 56 * 56);
  CHECK(w.grid.reduction == 32 * 28 * 28);  // the weight gradient reduces over every output position
  CHECK(f.variant == ConvVariant::Spatial);
}
