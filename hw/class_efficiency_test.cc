#include "hw/class_efficiency.h"

#include <catch2/catch.hpp>

#include <cmath>

#include "hw/roofline.h"
#include "hw/testing/fixtures.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// A compute-bound fp32 convolution (1e12 FLOPs) and a memory-bound batch norm (1e9 bytes), each filling the GPU.
struct ConvAndNorm {
  Graph g;
  OpId conv = -1, norm = -1;
  ConvAndNorm() {
    const TensorId x = add_tensor(g, "x", DType::F32, {32, 64, 56, 56});
    const TensorId w = add_tensor(g, "w", DType::F32, {64, 64, 3, 3});
    const TensorId y = add_tensor(g, "y", DType::F32, {32, 64, 56, 56});
    conv = add_op(g, OpKind::Conv2d, {x, w}, {y}, 1e12, 1'000'000, 0);
    norm = add_op(g, OpKind::BatchNorm, {y}, {x}, 1e6, 600'000'000, 400'000'000);
  }
};

}  // namespace

TEST_CASE("class efficiencies are declared parameters of the roofline, unset by default") {
  const auto specs = RooflineOptions::parameters().specs();
  auto has = [&](const std::string& n) {
    for (const ParamSpec& s : specs)
      if (s.name == n) return true;
    return false;
  };
  CHECK(has("conv_fwd_tf32_efficiency"));
  CHECK(has("conv_wgrad_fp16_efficiency"));
  CHECK(has("gemm_cuda_core_efficiency"));
  CHECK(has("normalization_memory_efficiency"));
  CHECK(has("occupancy_scaling"));
  CHECK(ClassEfficiencies::parameters().specs().size() == 4 * 4 + 4);
  const RooflineOptions d = RooflineOptions::parameters().from_params(Params(specs));
  CHECK(d.classes.compute_for(OpClass::Gemm, MathPath::Tf32, 0.6) == 0.6);
  CHECK(d.classes.memory_for(OpClass::Normalization, 0.8) == 0.8);
  // A value outside (0, 1] is refused where it is read.
  CHECK(ParamCheck::zero_or(ParamCheck::above_up_to(0, 1)).violation(ParamValue{1.5}).has_value());
}

TEST_CASE("the roofline takes an op's class efficiency on its math path") {
  ConvAndNorm t;
  Graph& g = t.g;
  const OpId c = t.conv, r = t.norm;
  RooflineOptions o = round_roofline();
  o.classes.compute[0][static_cast<size_t>(MathPath::Tf32)] = 0.25;  // conv_fwd on TF32
  o.classes.memory[1] = 0.25;                                        // normalization
  RooflineCostModel m(round_spec(), o);
  // conv: 1e12 / (100e12 * 0.25) = 40 ms; + 1 µs. Batch norm: 1e9 B / (1e12 * 0.25) = 4 ms; + 1 µs.
  CHECK(m.cost(g, g.op(c)).duration_ns == 40'000'000 + 1000);
  CHECK(m.cost(g, g.op(r)).duration_ns == 4'000'000 + 1000);
  // Another class on the same path keeps compute_efficiency: a dgrad at 0.5 is 20 ms.
  g.op(c).kind = OpKind::Conv2dBwdData;
  CHECK(m.cost(g, g.op(c)).duration_ns == 20'000'000 + 1000);
}

TEST_CASE("occupancy scaling slows a kernel that fills part of the GPU by its SM share") {
  Graph g;
  TensorId a = add_tensor(g, "a", DType::F32, {32, 2048});
  TensorId b = add_tensor(g, "b", DType::F32, {1000, 2048});
  TensorId y = add_tensor(g, "y", DType::F32, {32, 1000});
  OpId fc = add_op(g, OpKind::Linear, {a, b}, {y}, 2.0 * 32 * 2048 * 1000, 0, 0);
  RooflineOptions o = round_roofline();
  const RooflineCostModel plain(round_spec(), o);
  o.occupancy_scaling = true;
  const RooflineCostModel scaled(round_spec(), o);
  const double share = scaled.sm_fraction(g, g.op(fc));
  REQUIRE(share < 1.0);
  const double t_plain = static_cast<double>(plain.cost(g, g.op(fc)).duration_ns - 1000);
  const double t_scaled = static_cast<double>(scaled.cost(g, g.op(fc)).duration_ns - 1000);
  CHECK(t_scaled == Approx(t_plain / share).epsilon(1e-3));
}

TEST_CASE("a kind the calibration measured takes its factor over the single-efficiency roofline, others the classes") {
  ConvAndNorm t;
  Graph& g = t.g;
  const OpId c = t.conv, r = t.norm;
  RooflineOptions o = round_roofline();
  o.classes.compute[0][static_cast<size_t>(MathPath::Tf32)] = 0.25;  // conv_fwd on TF32 ([F])
  o.classes.memory[1] = 0.25;                                        // normalization ([F])
  o.occupancy_scaling = true;                                        // not for a measured kind either
  GpuSpec s = round_spec();
  s.op_class_scale[OpKind::Conv2d] = 3.0;  // measured on the GPU: 3x the 0.5-efficiency roofline, on TF32
  s.op_class_scale_path[OpKind::Conv2d] = MathPath::Tf32;
  RooflineCostModel m(s, o);
  // conv: (1e12 / (100e12 * 0.5) + 1 µs) * 3 = 60.003 ms, not the class's 40 ms; batch norm (no factor): its class.
  CHECK(m.cost(g, g.op(c)).duration_ns == 3 * (20'000'000 + 1000));
  REQUIRE(m.sm_fraction(g, g.op(r)) == 1.0);
  CHECK(m.cost(g, g.op(r)).duration_ns == 4'000'000 + 1000);
  // The same convolution in fp16 was not measured: the class model on the fp16 path (unset there: 0.5 of 400e12,
  // and occupancy scaling, which the conv's tiles fill).
  for (TensorId id : g.op(c).inputs) g.tensor(id).dtype = DType::F16;
  for (TensorId id : g.op(c).outputs) g.tensor(id).dtype = DType::F16;
  REQUIRE(m.sm_fraction(g, g.op(c)) == 1.0);
  CHECK(m.cost(g, g.op(c)).duration_ns == 5'000'000 + 1000);
}

// The harness measures one fused kernel per Adam update (4 reads, 3 writes); torch.optim's foreach passes (attr
// foreach, 20 tensors' bytes for AdamW) are kernels it never ran. Its factor, fitted to the fused kernels, once
// scaled the foreach bytes too (the held-out PyTorch BERT-base steps on h100-sxm-harness 3.1 -> 17.8 % slow): a
// foreach update takes the per-class model.
TEST_CASE("a measured Adam factor serves the fused per-parameter update, not torch.optim's foreach passes") {
  Graph g;
  const TensorId w = add_tensor(g, "w", DType::F32, {1 << 20});
  const TensorId gw = add_tensor(g, "w.grad", DType::F32, {1 << 20});
  const TensorId m = add_tensor(g, "w.exp_avg", DType::F32, {1 << 20});
  const TensorId v = add_tensor(g, "w.exp_avg_sq", DType::F32, {1 << 20});
  const double b = 4.0 * (1 << 20);  // one tensor's bytes
  const OpId fused = add_op(g, OpKind::AdamUpdate, {w, gw, m, v}, {w, m, v}, 12.0 * (1 << 20),
                            static_cast<uint64_t>(4 * b), static_cast<uint64_t>(3 * b));
  const OpId foreach = add_op(g, OpKind::AdamUpdate, {w, gw, m, v}, {w, m, v}, 12.0 * (1 << 20),
                              static_cast<uint64_t>(11 * b), static_cast<uint64_t>(7 * b));
  g.op(foreach).set_attr(Attr::foreach, 1);
  CHECK_FALSE(is_foreach_update(g.op(fused)));
  CHECK(is_foreach_update(g.op(foreach)));
  RooflineOptions o = round_roofline();
  o.classes.memory[3] = 0.25;  // optimizer ([F])
  GpuSpec s = round_spec();
  s.op_class_scale[OpKind::AdamUpdate] = 2.0;  // measured on the harness's fused kernels
  const RooflineCostModel model(s, o);
  // fused: (7 b / (1e12 * 0.5) + 1 µs) * 2, the factor on the single-efficiency roofline
  const auto ns = [](double v) { return static_cast<int64_t>(std::llround(v)); };
  CHECK(model.cost(g, g.op(fused)).duration_ns == 2 * (ns(7 * b / 0.5e12 * 1e9) + 1000));
  // foreach: 18 b at the optimizer class's 0.25, no factor
  CHECK(model.cost(g, g.op(foreach)).duration_ns == ns(18 * b / 0.25e12 * 1e9) + 1000);
}
