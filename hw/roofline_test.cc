#include "hw/roofline.h"

#include <catch2/catch.hpp>

#include "hw/testing/fixtures.h"

using namespace dlsim;
using namespace dlsim::testing;

// round_spec(): fp32 10 TFLOPS, tf32 100, bf16 200, fp16 400; HBM 1 TB/s; both efficiencies 0.5; fixed 1 µs;
// 100 SMs. So achievable: fp32 5e12, tf32 5e13, bf16 1e14 FLOP/s, memory 5e11 B/s.

TEST_CASE("a compute-bound fp32 convolution runs at the TF32 tensor-core rate") {
  Graph g;
  TensorId x = add_tensor(g, "x", DType::F32, {32, 64, 56, 56});
  TensorId w = add_tensor(g, "w", DType::F32, {64, 64, 3, 3});
  TensorId y = add_tensor(g, "y", DType::F32, {32, 64, 56, 56});
  OpId c = add_op(g, OpKind::Conv2d, {x, w}, {y}, 1e12, 1'000'000, 0);
  RooflineCostModel m(round_spec(), round_roofline());
  // compute 1e12 / 5e13 = 20 ms; memory 1e6 / 5e11 = 2 µs; + 1 µs fixed.
  CHECK(m.cost(g, g.op(c)).duration_ns == 20'000'000 + 1000);
  CHECK(compute_peak(m.spec(), g, g.op(c)) == 100e12);
}

TEST_CASE("a memory-bound elementwise op runs at the achievable HBM bandwidth") {
  Graph g;
  TensorId x = add_tensor(g, "x", DType::BF16, {1024, 1024});
  TensorId y = add_tensor(g, "y", DType::BF16, {1024, 1024});
  OpId r = add_op(g, OpKind::Relu, {x}, {y}, 1e6, 600'000'000, 400'000'000);
  RooflineCostModel m(round_spec(), round_roofline());
  // memory 1e9 B / 5e11 = 2 ms; compute 1e6 / 5e12 (CUDA cores even for bf16) = 0.2 µs.
  CHECK(m.cost(g, g.op(r)).duration_ns == 2'000'000 + 1000);
  CHECK(compute_peak(m.spec(), g, g.op(r)) == 10e12);
}

TEST_CASE("matmuls use CUDA-core fp32 in F32 (TF32 off) and tensor cores in bf16/fp16") {
  Graph g;
  TensorId a = add_tensor(g, "a", DType::F32, {1024, 1024});
  TensorId b = add_tensor(g, "b", DType::F32, {1024, 1024});
  TensorId c = add_tensor(g, "c", DType::F32, {1024, 1024});
  TensorId ah = add_tensor(g, "ah", DType::BF16, {1024, 1024});
  TensorId ch = add_tensor(g, "ch", DType::BF16, {1024, 1024});
  TensorId af = add_tensor(g, "af", DType::F16, {1024, 1024});
  OpId f32 = add_op(g, OpKind::Linear, {a, b}, {c}, 1e12, 0, 0);
  OpId bf16 = add_op(g, OpKind::Linear, {ah, b}, {ch}, 1e12, 0, 0);
  OpId f16 = add_op(g, OpKind::MatMul, {af, af}, {c}, 1e12, 0, 0);
  RooflineCostModel m(round_spec(), round_roofline());
  CHECK(m.cost(g, g.op(f32)).duration_ns == 200'000'000 + 1000);  // 1e12 / 5e12
  CHECK(m.cost(g, g.op(bf16)).duration_ns == 10'000'000 + 1000);  // 1e12 / 1e14
  CHECK(m.cost(g, g.op(f16)).duration_ns == 5'000'000 + 1000);    // 1e12 / 2e14
  CHECK(compute_dtype(g, g.op(bf16)) == DType::BF16);
}

TEST_CASE("the compute dtype skips integer inputs (embedding ids)") {
  Graph g;
  TensorId ids = add_tensor(g, "ids", DType::I64, {8, 128});
  TensorId table = add_tensor(g, "table", DType::BF16, {1000, 64});
  TensorId out = add_tensor(g, "out", DType::BF16, {8, 128, 64});
  OpId e = add_op(g, OpKind::Embedding, {ids, table}, {out}, 0, 100, 100);
  CHECK(compute_dtype(g, g.op(e)) == DType::BF16);
  OpId only_ints = add_op(g, OpKind::Other, {ids}, {}, 0, 8, 0);
  CHECK(compute_dtype(g, g.op(only_ints)) == DType::F32);
}

TEST_CASE("a view with no flops and no bytes launches no kernel") {
  Graph g;
  TensorId x = add_tensor(g, "x", DType::F32, {4, 4});
  TensorId y = add_tensor(g, "y", DType::F32, {16});
  OpId v = add_op(g, OpKind::Reshape, {x}, {y}, 0, 0, 0);
  CHECK(RooflineCostModel(round_spec(), round_roofline()).cost(g, g.op(v)).duration_ns == 0);
}

TEST_CASE("sm_fraction follows the block count relative to the SMs") {
  const RooflineCostModel m(round_spec(), round_roofline());  // 100 SMs
  Graph g;
  TensorId small = add_tensor(g, "small", DType::F32, {10 * 512});
  TensorId big = add_tensor(g, "big", DType::F32, {1 << 24});
  OpId r_small = add_op(g, OpKind::Relu, {small}, {small}, 0, 1, 1);
  OpId r_big = add_op(g, OpKind::Relu, {big}, {big}, 0, 1, 1);
  CHECK(m.sm_fraction(g, g.op(r_small)) == Approx(0.10));  // 10 blocks of 512 elements
  CHECK(m.sm_fraction(g, g.op(r_big)) == 1.0);

  // A classifier layer at batch 32: output 32x1000 = 2 tiles of 128x128; K = 2048 allows 4 splits of 512.
  TensorId x = add_tensor(g, "x", DType::F32, {32, 2048});
  TensorId w = add_tensor(g, "w", DType::F32, {1000, 2048});
  TensorId y = add_tensor(g, "y", DType::F32, {32, 1000});
  OpId fc = add_op(g, OpKind::Linear, {x, w}, {y}, 2.0 * 32 * 1000 * 2048, 1, 1);
  CHECK(m.sm_fraction(g, g.op(fc)) == Approx(0.08));  // 2 tiles x 4 splits

  // A weight gradient with a tiny output but a long reduction (N*H*W) is split until it fills the GPU.
  TensorId dy = add_tensor(g, "dy", DType::F32, {32, 64, 112, 112});
  TensorId xin = add_tensor(g, "xin", DType::F32, {32, 3, 224, 224});
  TensorId dw = add_tensor(g, "dw", DType::F32, {64, 3, 7, 7});
  OpId wgrad = add_op(g, OpKind::Conv2dBwdFilter, {dy, xin}, {dw}, 2.0 * 9408 * 32 * 112 * 112, 1, 1);
  CHECK(m.sm_fraction(g, g.op(wgrad)) == 1.0);

  // Never below one SM, even with no tensors at all.
  OpId bare = add_op(g, OpKind::Other, {}, {}, 1, 0, 0);
  CHECK(m.sm_fraction(g, g.op(bare)) == Approx(0.01));
}

TEST_CASE("the tile sizes are parameters: a smaller elementwise block means more blocks") {
  Graph g;
  TensorId x = add_tensor(g, "x", DType::F32, {10 * 512});
  OpId relu = add_op(g, OpKind::Relu, {x}, {x}, 0, 1, 1);
  RooflineOptions o = round_roofline();
  o.elementwise_block_elems = 256;
  CHECK(RooflineCostModel(round_spec(), o).sm_fraction(g, g.op(relu)) == Approx(0.20));  // 20 blocks of 256
}

TEST_CASE("the roofline block reads into RooflineOptions, µs into ns") {
  Params p(RooflineOptions::parameters().specs());
  p.set("kernel_fixed_us", 1.5);
  CHECK(RooflineOptions::parameters().from_params(p).kernel_fixed_ns == 1500);  // µs in the file, ns in the model
  for (const auto& e : kernel_model_registry().entries()) {
    INFO(e.name);
    CHECK_NOTHROW(check_params(e.params, Params(e.params), e.name));
  }
}

TEST_CASE("a kernel's grid: blocks from its tiles, blocks per SM from the hardware file") {
  GpuSpec spec = round_spec();  // 100 SMs
  spec.concurrency.gemm_blocks_per_sm = 2;
  spec.concurrency.elementwise_blocks_per_sm = 16;
  const RooflineCostModel m(spec, round_roofline());
  Graph g;
  // The classifier of the test above: 2 tiles x 4 split-K slices.
  TensorId x = add_tensor(g, "x", DType::F32, {32, 2048});
  TensorId w = add_tensor(g, "w", DType::F32, {1000, 2048});
  TensorId y = add_tensor(g, "y", DType::F32, {32, 1000});
  OpId fc = add_op(g, OpKind::Linear, {x, w}, {y}, 2.0 * 32 * 1000 * 2048, 1, 1);
  const KernelCost c = m.cost(g, g.op(fc));
  CHECK(c.blocks == 8);
  CHECK(c.blocks_per_sm == 2);
  // 1 << 24 elements, 512 per block: 32768 blocks, 16 per SM: 1600 slots, 21 waves.
  TensorId big = add_tensor(g, "big", DType::F32, {1 << 24});
  OpId relu = add_op(g, OpKind::Relu, {big}, {big}, 0, 1, 1);
  CHECK(m.grid(g, g.op(relu)).blocks == 32768);
  CHECK(m.grid(g, g.op(relu)).blocks_per_sm == 16);
  // The micro-benchmark's 3x3 convolution, 256 -> 256 channels on 14x14, on an H100's 132 SMs: at batch 1,
  // 196 x 256 outputs = 4 tiles, K = 2304 allows 4 splits: 16 blocks; at batch 32, 98 tiles x 2 splits.
  CHECK(tensor_core_blocks(196.0 * 256, 2304, 132, 128 * 128, 512) == 16);
  CHECK(tensor_core_blocks(32.0 * 196 * 256, 2304, 132, 128 * 128, 512) == 196);
}
