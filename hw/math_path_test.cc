#include "hw/math_path.h"

#include <catch2/catch.hpp>

#include "hw/gpu_spec_file.h"
#include "hw/op_class.h"
#include "hw/roofline.h"
#include "workloads/zoo.h"

using namespace dlsim;

namespace {

GpuSpec spec(const std::string& name) { return load_gpu_spec(resolve_hw_path(name)); }

Graph resnet18(Precision p, Tf32 t = Tf32::Conv) {
  ModelOptions o;
  o.batch = 2;
  o.training.precision = p;
  o.training.tf32 = t;
  o.training.memory_format = MemoryFormat::NHWC;  // no layout transposes: only the precision varies
  return build_training_graph("resnet18", o);
}

const Op& first(const Graph& g, OpKind k) {
  for (const Op& op : g.ops())
    if (op.kind == k) return op;
  FAIL("no op of kind " << to_string(k));
  return g.ops().front();
}

}  // namespace

TEST_CASE("a V100 runs fp16 on tensor cores and falls back for bf16 and TF32, with warnings") {
  const GpuSpec v100 = spec("v100-sxm2-16gb");
  const Graph fp16 = resnet18(Precision::MixedFP16);
  CHECK(math_path(v100, fp16, first(fp16, OpKind::Conv2d)) == MathPath::Fp16);
  CHECK(math_path(v100, fp16, first(fp16, OpKind::Linear)) == MathPath::Fp16);
  CHECK(precision_warnings(v100, fp16).empty());

  // No bf16 units: PyTorch emulates bf16 in fp32 on the CUDA cores; the run says so.
  const Graph bf16 = resnet18(Precision::MixedBF16);
  CHECK(math_path(v100, bf16, first(bf16, OpKind::Conv2d)) == MathPath::CudaCore);
  CHECK(compute_peak(v100, bf16, first(bf16, OpKind::Conv2d)) == v100.peak_fp32);
  const auto w = precision_warnings(v100, bf16);
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0], Catch::Contains("no bf16 tensor cores"));
  CHECK_THAT(w[0], Catch::Contains("v100-sxm2-16gb"));
  // The model held in bf16 falls back the same way.
  CHECK(precision_warnings(v100, resnet18(Precision::BF16)).size() == 1);

  // TF32 does not exist there: asked for on matmuls it changes nothing and warns; PyTorch's default is no request.
  const Graph all = resnet18(Precision::FP32, Tf32::All);
  CHECK(math_path(v100, all, first(all, OpKind::Linear)) == MathPath::CudaCore);
  CHECK(math_path(v100, all, first(all, OpKind::Conv2d)) == MathPath::CudaCore);
  REQUIRE(precision_warnings(v100, all).size() == 1);
  CHECK_THAT(precision_warnings(v100, all)[0], Catch::Contains("no TF32 tensor cores"));
  CHECK(precision_warnings(v100, resnet18(Precision::FP32)).empty());
}

TEST_CASE("tf32 switches which fp32 matrix ops use TF32 tensor cores on an A100") {
  const GpuSpec a100 = spec("a100-sxm-40gb");
  // PyTorch's default: cuDNN may use TF32, cuBLAS may not.
  const Graph conv = resnet18(Precision::FP32, Tf32::Conv);
  CHECK(math_path(a100, conv, first(conv, OpKind::Conv2d)) == MathPath::Tf32);
  CHECK(math_path(a100, conv, first(conv, OpKind::Conv2dBwdFilter)) == MathPath::Tf32);
  CHECK(math_path(a100, conv, first(conv, OpKind::Linear)) == MathPath::CudaCore);
  CHECK(math_path(a100, conv, first(conv, OpKind::LinearBwdWeight)) == MathPath::CudaCore);
  // NVIDIA's containers: TF32 everywhere.
  const Graph all = resnet18(Precision::FP32, Tf32::All);
  CHECK(math_path(a100, all, first(all, OpKind::Linear)) == MathPath::Tf32);
  CHECK(math_path(a100, all, first(all, OpKind::LinearBwdData)) == MathPath::Tf32);
  CHECK(compute_peak(a100, all, first(all, OpKind::Linear)) == a100.peak_tf32);
  // Off: even convolutions run on the CUDA cores.
  const Graph off = resnet18(Precision::FP32, Tf32::Off);
  CHECK(math_path(a100, off, first(off, OpKind::Conv2d)) == MathPath::CudaCore);
  CHECK(math_path(a100, off, first(off, OpKind::Conv2dBwdData)) == MathPath::CudaCore);
  // Non-matrix ops stay on the CUDA cores whatever the precision.
  const Graph bf16 = resnet18(Precision::MixedBF16);
  CHECK(math_path(a100, bf16, first(bf16, OpKind::Conv2d)) == MathPath::Bf16);
  CHECK(math_path(a100, bf16, first(bf16, OpKind::BatchNorm)) == MathPath::CudaCore);
  CHECK(precision_warnings(a100, bf16).empty());
}

TEST_CASE("PyTorch's default TF32 choice adds no attribute, so default graphs keep their op signatures") {
  const Graph g = resnet18(Precision::FP32, Tf32::Conv);
  for (const Op& op : g.ops()) CHECK_FALSE((op.declares(Attr::tf32) && op.has_attr(Attr::tf32)));
  const Graph off = resnet18(Precision::FP32, Tf32::Off);
  CHECK(first(off, OpKind::Conv2d).attr(Attr::tf32) == 0);
  CHECK_FALSE(first(off, OpKind::Linear).has_attr(Attr::tf32));
  // Only fp32 ops carry it: under mixed precision the choice is moot.
  const Graph mixed = resnet18(Precision::MixedFP16, Tf32::All);
  for (const Op& op : mixed.ops())
    if (op.kind == OpKind::Linear || op.kind == OpKind::Conv2d) CHECK_FALSE(op.has_attr(Attr::tf32));
}

TEST_CASE("FlashAttention runs on the tensor cores as a GEMM, the Llama layers' other ops are memory-bound classes") {
  const GpuSpec h100 = spec("h100-sxm-datasheet");
  ModelOptions o;
  o.batch = 1;
  o.seq_len = 256;
  o.training.precision = Precision::MixedBF16;
  o.training.optimizer = Optimizer::Adam;
  const Graph g = build_training_graph("qwen2.5-0.5b", o);
  for (OpKind k : {OpKind::FlashAttention, OpKind::FlashAttentionBwd}) {
    INFO(to_string(k));
    CHECK(math_path(h100, g, first(g, k)) == MathPath::Bf16);
    CHECK(compute_peak(h100, g, first(g, k)) == h100.peak_bf16);
    CHECK(op_class(first(g, k)) == OpClass::Gemm);
  }
  // RMSNorm written out: its mean a reduction (the mean's backward, a division, elementwise), the rest elementwise;
  // under kernels: fused one normalisation op each way
  for (const Op& op : g.ops()) {
    if (op.name != "model.norm.mean" && op.name != "model.norm.mean.bwd" && op.name != "model.norm.rsqrt") continue;
    INFO(op.name);
    CHECK(op_class(op) == (op.name == "model.norm.mean" ? OpClass::Reduction : OpClass::Elementwise));
  }
  ModelOptions fused = o;
  fused.training.kernels = Kernels::Fused;
  const Graph gf = build_training_graph("qwen2.5-0.5b", fused);
  CHECK(op_class(first(gf, OpKind::RmsNorm)) == OpClass::Normalization);
  CHECK(op_class(first(gf, OpKind::RmsNormBwd)) == OpClass::Normalization);
  CHECK(op_class(first(g, OpKind::RepeatKvBwd)) == OpClass::Reduction);
  for (OpKind k : {OpKind::RepeatKv, OpKind::Silu, OpKind::SiluBwd}) {
    CHECK(op_class(first(g, k)) == OpClass::Elementwise);
    CHECK(math_path(h100, g, first(g, k)) == MathPath::CudaCore);
  }
  // the rotary: written out every kernel elementwise (its slices' zero fills and copies too); fused one op each way
  for (const Op& op : g.ops()) {
    if (op.name.rfind("model.layers.0.self_attn.rotary.q", 0) != 0) continue;
    INFO(op.name);
    CHECK(op_class(op) == OpClass::Elementwise);
    CHECK(math_path(h100, g, op) == MathPath::CudaCore);
  }
  for (OpKind k : {OpKind::Rotary, OpKind::RotaryBwd}) {
    CHECK(op_class(first(gf, k)) == OpClass::Elementwise);
    CHECK(math_path(h100, gf, first(gf, k)) == MathPath::CudaCore);
  }
}
