#include "hw/fitted/kernel_terms.h"

#include <catch2/catch.hpp>

#include "hw/fitted/op_kernel_shapes.h"
#include "hw/testing/fixtures.h"
#include "workloads/zoo.h"

using namespace dlsim;
using namespace dlsim::testing;

TEST_CASE("batch norm's channel term: one channel's bytes over one SM's share of the bandwidth") {
  const GpuSpec spec = round_spec();
  KernelShape s;
  s.family = KernelFamily::BatchNorm;
  s.bytes = 1e9;
  const KernelTerms none = kernel_terms(s, spec, FittedKernels{});
  CHECK(none.channel_us == 0);  // no channels known: no term
  s.channels = 32;
  const KernelTerms t = kernel_terms(s, spec, FittedKernels{});
  CHECK(t.byte_us == Approx(1e9 / spec.hbm_bandwidth * 1e6));
  CHECK(t.channel_us == Approx(t.byte_us / 32 * spec.sms));
  // Fewer channels over the same bytes take longer where the class has the term, and the same where it has not.
  FittedKernelClass c{2, 0, 0, 1.5, 0, 0.25};
  s.channels = 16;
  const double few = class_time_us(c, kernel_terms(s, spec, FittedKernels{}));
  s.channels = 512;
  const double many = class_time_us(c, kernel_terms(s, spec, FittedKernels{}));
  CHECK(few > many);
  c.channel_scale = 0;
  CHECK(class_time_us(c, kernel_terms(s, spec, FittedKernels{})) == Approx(2 + 1.5 * t.byte_us));
}

TEST_CASE("a backward batch norm's channel term has its own coefficient, the forward's where the class has none") {
  const GpuSpec spec = round_spec();
  KernelShape s;
  s.family = KernelFamily::BatchNorm;
  s.bytes = 1e9;
  s.channels = 16;
  const KernelTerms fwd = kernel_terms(s, spec, FittedKernels{});
  s.backward = true;
  const KernelTerms bwd = kernel_terms(s, spec, FittedKernels{});
  CHECK(bwd.channel_us == 0);
  CHECK(bwd.channel_bwd_us == Approx(fwd.channel_us));
  CHECK(fwd.channel_bwd_us == 0);
  FittedKernelClass c{2, 0, 0, 1.5, 0, 0.25, 0.75};
  CHECK(class_time_us(c, bwd) == Approx(2 + 1.5 * bwd.byte_us + 0.75 * bwd.channel_bwd_us));
  CHECK(class_time_us(c, fwd) == Approx(2 + 1.5 * fwd.byte_us + 0.25 * fwd.channel_us));
  c.channel_bwd_scale = 0;  // a class fitted to a sweep alone (forward records): the forward's coefficient
  CHECK(class_time_us(c, bwd) == Approx(class_time_us(c, fwd)));
}

TEST_CASE("a zoo CNN's batch norms, forward and backward, know their channels") {
  ModelOptions opts;
  opts.batch = 4;
  const Graph g = build_training_graph("resnet18", opts);
  const GpuSpec spec = round_spec();
  size_t forward = 0, backward = 0;
  for (const Op& op : g.ops()) {
    if (op.kind != OpKind::BatchNorm && op.kind != OpKind::BatchNormBwd) continue;
    const auto shapes = op_kernel_shapes(spec, g, op);
    REQUIRE(shapes);
    REQUIRE(shapes->size() == 1);
    CHECK(shapes->front().family == KernelFamily::BatchNorm);
    CHECK(shapes->front().channels >= 64);  // resnet18's narrowest
    CHECK(shapes->front().backward == (op.kind == OpKind::BatchNormBwd));
    ++(op.kind == OpKind::BatchNorm ? forward : backward);
  }
  CHECK(forward == 20);
  CHECK(backward == 20);
}

TEST_CASE("layer norm's row term: its rows over the SMs, forward and backward apart, the forward's where the class "
          "has no backward one") {
  const GpuSpec spec = round_spec();
  KernelShape s;
  s.family = KernelFamily::LayerNorm;
  s.bytes = 77e6;
  CHECK(kernel_terms(s, spec, FittedKernels{}).row_us == 0);  // no rows known (RMS norm): no term
  s.rows = 100352;  // ConvNeXt-T's first stage: 32 x 56 x 56 rows of 96
  const KernelTerms fwd = kernel_terms(s, spec, FittedKernels{});
  CHECK(fwd.row_us == Approx(100352.0 / spec.sms));
  CHECK(fwd.row_bwd_us == 0);
  s.backward = true;
  const KernelTerms bwd = kernel_terms(s, spec, FittedKernels{});
  CHECK(bwd.row_us == 0);
  CHECK(bwd.row_bwd_us == Approx(fwd.row_us));
  CHECK(bwd.byte_us == 0);  // the backward's bytes have their own coefficient
  CHECK(bwd.byte_bwd_us == Approx(fwd.byte_us));
  CHECK(fwd.byte_bwd_us == 0);
  FittedKernelClass c{3, 0, 0, 0.8, 0, 0, 0, 0.18, 0.4, 4.0};
  CHECK(class_time_us(c, fwd) == Approx(3 + 0.8 * fwd.byte_us + 0.18 * fwd.row_us));
  CHECK(class_time_us(c, bwd) == Approx(3 + 4.0 * bwd.byte_bwd_us + 0.4 * bwd.row_bwd_us));
  c.byte_bwd_scale = 0;  // none: the forward's
  CHECK(class_time_us(c, bwd) == Approx(3 + 0.8 * bwd.byte_bwd_us + 0.4 * bwd.row_bwd_us));
  // As many bytes in 16 times fewer rows (ViT-B/16's 6,304 rows of 768 against 100,352 of 96): shorter.
  s.backward = false;
  s.rows = 6272;
  CHECK(class_time_us(c, kernel_terms(s, spec, FittedKernels{})) < class_time_us(c, fwd));
  c.row_bwd_scale = 0;
  CHECK(class_time_us(c, bwd) == Approx(3 + 0.8 * bwd.byte_bwd_us + 0.18 * bwd.row_bwd_us));
}

TEST_CASE("a transformer's layer norms, forward and backward, know their rows, and RMS norm has none") {
  ModelOptions opts;
  opts.batch = 4;
  opts.seq_len = 64;
  const Graph g = build_training_graph("bert-base", opts);
  const GpuSpec spec = round_spec();
  size_t forward = 0, backward = 0;
  for (const Op& op : g.ops()) {
    if (op.kind != OpKind::LayerNorm && op.kind != OpKind::LayerNormBwd) continue;
    const auto shapes = op_kernel_shapes(spec, g, op);
    REQUIRE(shapes);
    CHECK(shapes->front().family == KernelFamily::LayerNorm);
    CHECK(shapes->front().rows == 4 * 64);  // batch x tokens rows of 768
    CHECK(shapes->front().backward == (op.kind == OpKind::LayerNormBwd));
    ++(op.kind == OpKind::LayerNorm ? forward : backward);
  }
  CHECK(forward > 0);
  CHECK(backward == forward);
  opts.training.precision = Precision::BF16;
  const Graph llama = build_training_graph("qwen2.5-0.5b", opts);
  for (const Op& op : llama.ops())
    if (op.kind == OpKind::RmsNorm) {
      const auto shapes = op_kernel_shapes(spec, llama, op);
      REQUIRE(shapes);
      CHECK(shapes->front().rows == 0);
    }
}

TEST_CASE("a windowed pool's window term: its windows' reads over the bandwidth, forward and backward apart, the "
          "forward's coefficients where the class has no backward ones") {
  const GpuSpec spec = round_spec();
  KernelShape s;
  s.family = KernelFamily::MaxPool;
  s.bytes = 50e6;
  s.window_bytes = 9 * 12e6;
  const KernelTerms fwd = kernel_terms(s, spec, FittedKernels{});
  CHECK(fwd.window_us == Approx(9 * 12e6 / spec.hbm_bandwidth * 1e6));
  CHECK(fwd.window_bwd_us == 0);
  s.backward = true;
  const KernelTerms bwd = kernel_terms(s, spec, FittedKernels{});
  CHECK(bwd.window_us == 0);
  CHECK(bwd.window_bwd_us == Approx(fwd.window_us));
  CHECK(bwd.byte_us == 0);  // a pool's backward bytes take byte_bwd_scale, as a layer norm's
  CHECK(bwd.byte_bwd_us == Approx(fwd.byte_us));
  FittedKernelClass c{4, 0, 0, 1.5, 0, 0, 0, 0, 0, 3.9, 0.9, 1.5};
  CHECK(class_time_us(c, fwd) == Approx(4 + 1.5 * fwd.byte_us + 0.9 * fwd.window_us));
  CHECK(class_time_us(c, bwd) == Approx(4 + 3.9 * bwd.byte_bwd_us + 1.5 * bwd.window_bwd_us));
  c.window_bwd_scale = 0;
  CHECK(class_time_us(c, bwd) == Approx(4 + 3.9 * bwd.byte_bwd_us + 0.9 * bwd.window_bwd_us));
}

TEST_CASE("a zoo CNN's max pool and its backward are windowed pools over the pooled output, and its global average "
          "pool stays a reduction") {
  ModelOptions opts;
  opts.batch = 4;
  const Graph g = build_training_graph("resnet18", opts);
  const GpuSpec spec = round_spec();
  size_t max_pools = 0, reductions = 0;
  for (const Op& op : g.ops()) {
    const bool pool = op.kind == OpKind::MaxPool || op.kind == OpKind::MaxPoolBwd;
    if (!pool && op.kind != OpKind::GlobalAvgPool && op.kind != OpKind::AvgPoolBwd) continue;
    const auto shapes = op_kernel_shapes(spec, g, op);
    REQUIRE(shapes);
    REQUIRE(shapes->size() == 1);
    const KernelShape& s = shapes->front();
    if (pool) {
      ++max_pools;
      CHECK(s.family == KernelFamily::MaxPool);
      CHECK(s.backward == (op.kind == OpKind::MaxPoolBwd));
      // resnet18's 3x3 max pool of 4 x 64 x 112 x 112 into 56 x 56, fp32
      CHECK(s.window_bytes == Approx(4.0 * 64 * 56 * 56 * 9 * 4));
    } else {
      ++reductions;
      CHECK(s.family == KernelFamily::Reduction);
      CHECK(s.window_bytes == 0);
    }
  }
  CHECK(max_pools == 2);
  CHECK(reductions == 2);
}

TEST_CASE("a concatenation's term: its grid's idle blocks over the SMs, priced by input_scale where the class has "
          "it") {
  const GpuSpec spec = round_spec();  // 100 SMs, 1 TB/s
  KernelShape s;
  s.family = KernelFamily::Concat;
  s.bytes = 1e6;
  const KernelTerms none = kernel_terms(s, spec, FittedKernels{});
  CHECK(none.input_us == 0);  // no inputs known: no term
  s.inputs = 30;
  s.input_blocks = 400;
  s.idle_blocks = 30 * 400 - 1000;
  const KernelTerms t = kernel_terms(s, spec, FittedKernels{});
  CHECK(t.byte_us == Approx(1.0));
  CHECK(t.input_us == Approx(110.0));  // 11,000 idle blocks over 100 SMs
  FittedKernelClass c{0.5, 0, 0, 1.1, 0};
  CHECK(class_time_us(c, t) == Approx(0.5 + 1.1));  // no input_scale: the bytes alone, as an elementwise copy
  c.input_scale = 0.05;
  CHECK(class_time_us(c, t) == Approx(0.5 + 1.1 + 0.05 * 110));
}
