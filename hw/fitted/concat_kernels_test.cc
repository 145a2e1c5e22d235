#include "hw/fitted/concat_kernels.h"

#include <catch2/catch.hpp>

#include "hw/fitted/op_kernel_shapes.h"
#include "hw/testing/fixtures.h"
#include "workloads/zoo.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {
double f32_bytes(double n, double c, double h, double w) { return n * c * h * w * 4; }
}  // namespace

TEST_CASE("a cat's grid row is as wide as its largest input needs: the H200 traces' DenseNet-121 grids") {
  // grid.x of the CatArrayBatchedCopy kernels in h200-2026-11-27b's densenet121-b32 trace (132 SMs): 4224 (capped at
  // 32 blocks per SM) for block 1's 64 + 32 channels at 56x56, 3136 for block 3's 256 + 32 at 14x14, 1568 for
  // block 4's 512 + 32 at 7x7; grid.y the inputs.
  const auto block1 = concat_kernel_shapes({f32_bytes(32, 64, 56, 56), f32_bytes(32, 32, 56, 56)}, 4, DType::F32, 132);
  REQUIRE(block1.size() == 1);
  CHECK(block1[0].family == KernelFamily::Concat);
  CHECK(block1[0].inputs == 2);
  CHECK(block1[0].input_blocks == 4224);
  CHECK(block1[0].bytes == 2 * (f32_bytes(32, 64, 56, 56) + f32_bytes(32, 32, 56, 56)));
  CHECK(block1[0].idle_blocks == 0);  // both inputs fill their rows (6,272 blocks of data each, rows of 4,224)
  std::vector<double> b3{f32_bytes(32, 256, 14, 14)};
  for (int i = 0; i < 29; ++i) b3.push_back(f32_bytes(32, 32, 14, 14));
  const auto block3 = concat_kernel_shapes(b3, 4, DType::F32, 132);
  REQUIRE(block3.size() == 1);
  CHECK(block3[0].inputs == 30);
  CHECK(block3[0].input_blocks == 3136);
  CHECK(block3[0].idle_blocks == 29 * (3136 - 392));  // each growth map needs 392 blocks of its row
  CHECK(concat_kernel_shapes({f32_bytes(32, 512, 7, 7), f32_bytes(32, 32, 7, 7)}, 4, DType::F32, 132)[0].input_blocks ==
        1568);
}

TEST_CASE("a cat of more than 128 inputs is several launches, later rows as wide as the widest input before") {
  std::vector<double> parts(300, 2048.0);  // one block each
  parts[5] = 2048.0 * 10;                  // ten blocks, in the first batch
  const auto v = concat_kernel_shapes(parts, 2, DType::BF16, 100);
  REQUIRE(v.size() == 3);
  CHECK(v[0].inputs == 128);
  CHECK(v[1].inputs == 128);
  CHECK(v[2].inputs == 44);
  for (const KernelShape& s : v) {
    CHECK(s.family == KernelFamily::Concat);
    CHECK(s.dtype == DType::BF16);
    CHECK(s.input_blocks == 10);  // PyTorch keeps the largest input's size across batches
  }
  CHECK(v[0].idle_blocks == 127 * 9);
  CHECK(v[2].idle_blocks == 44 * 9);
  CHECK(v[0].bytes + v[1].bytes + v[2].bytes == 2 * (299 * 2048.0 + 20480));
}

TEST_CASE("a single input, or inputs of more than 4 dimensions, are one copy each, and empty inputs are skipped") {
  const auto one = concat_kernel_shapes({0, 4096, 0}, 4, DType::F32, 100);
  REQUIRE(one.size() == 1);
  CHECK(one[0].family == KernelFamily::Elementwise);
  CHECK(one[0].bytes == 8192);
  CHECK(one[0].inputs == 0);
  CHECK(one[0].idle_blocks == 0);
  const auto five_d = concat_kernel_shapes({4096, 1024, 512}, 5, DType::F32, 100);
  REQUIRE(five_d.size() == 3);
  for (const KernelShape& s : five_d) CHECK(s.family == KernelFamily::Elementwise);
  CHECK(five_d[1].bytes == 2048);
  CHECK(concat_kernel_shapes({}, 4, DType::F32, 100).empty());
}

TEST_CASE("the zoo's concatenations are priced as PyTorch's cat launches, their backward as before") {
  ModelOptions opts;
  opts.batch = 2;
  const GpuSpec spec = round_spec();
  for (const char* model : {"densenet121", "googlenet"}) {
    const Graph g = build_training_graph(model, opts);
    size_t cats = 0, single = 0, backward = 0;
    for (const Op& op : g.ops()) {
      if (op.kind != OpKind::Concat && op.kind != OpKind::ConcatBwd) continue;
      const auto shapes = op_kernel_shapes(spec, g, op);
      REQUIRE(shapes);
      REQUIRE(shapes->size() == 1);
      const KernelShape& s = shapes->front();
      if (op.kind == OpKind::ConcatBwd) {
        CHECK(s.family == KernelFamily::Elementwise);
        ++backward;
      } else if (op.inputs.size() == 1) {  // DenseNet's first layer of a block: torch.cat of one tensor, a copy
        CHECK(s.family == KernelFamily::Elementwise);
        ++single;
      } else {
        CHECK(s.family == KernelFamily::Concat);
        CHECK(s.inputs == static_cast<double>(op.inputs.size()));
        CHECK(s.input_blocks >= 1);
        ++cats;
      }
    }
    CHECK(cats > 0);
    CHECK(backward > 0);
    if (std::string(model) == "googlenet") CHECK(single == 0);
  }
}
