#include "hw/fitted/fitted_cost_model.h"

#include "common/strings.h"

#include <catch2/catch.hpp>

#include <map>

#include "hw/fitted/kernel_terms.h"
#include "hw/fitted/op_kernel_shapes.h"
#include "hw/hardware.h"
#include "hw/op_signature.h"
#include "hw/testing/fixtures.h"
#include "workloads/training.h"
#include "workloads/zoo.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// Every class the zoo's fp32 CNNs and a bf16 Llama need, each with its own round coefficients so that a test
// can tell which class priced an op.
FittedKernels all_classes() {
  FittedKernels f;
  double fixed = 10;
  for (const char* name :
       {"conv_fwd.tf32.1x1", "conv_fwd.tf32.spatial", "conv_fwd.tf32.depthwise", "conv_dgrad.tf32.1x1",
        "conv_dgrad.tf32.spatial", "conv_dgrad.tf32.depthwise", "conv_wgrad.tf32.1x1", "conv_wgrad.tf32.spatial",
        "conv_wgrad.tf32.depthwise", "gemm.cuda_core", "gemm.bf16", "bmm.bf16", "sdpa_fwd.bf16", "sdpa_bwd.bf16",
        "elementwise.f32", "elementwise.bf16", "reduction.f32", "reduction.bf16", "layernorm.f32", "layernorm.bf16",
        "batchnorm.f32"})
    f.classes[name] = FittedKernelClass{fixed += 1, 1.5, 0.5, 2.0, 10};
  return f;
}

GpuSpec fitted_spec(FittedKernels f) {
  GpuSpec s = round_spec();
  s.kernel_model = "fitted";
  s.fitted_kernels = std::move(f);
  return s;
}

Graph training_graph(const std::string& model, int64_t batch, int64_t seq = 0,
                     Precision precision = Precision::FP32) {
  ModelOptions mo;
  mo.batch = batch;
  mo.seq_len = seq;
  mo.training.precision = precision;
  return make_training_graph(build_forward_graph(model, mo), mo.training);
}

// The op's time by hand: the sum over its kernels of its class's formula.
TimeNs by_hand(const GpuSpec& s, const Graph& g, const Op& op) {
  double us = 0;
  const auto shapes = op_kernel_shapes(s, g, op);
  for (const KernelShape& k : *shapes)
    us += class_time_us(*find_class(s.fitted_kernels, k), kernel_terms(k, s, s.fitted_kernels));
  return static_cast<TimeNs>(std::llround(us * 1e3));
}

}  // namespace

TEST_CASE("every convolution, matrix product, attention and memory-bound op of the zoo is priced by its class") {
  const GpuSpec s = fitted_spec(all_classes());
  const auto model = make_cost_model(s);
  REQUIRE(dynamic_cast<FittedCostModel*>(model.get()) != nullptr);
  for (const auto& [name, seq] : std::vector<std::pair<std::string, int64_t>>{
           {"resnet18", 0}, {"mobilenet_v2", 0}, {"googlenet", 0}, {"qwen2.5-0.5b", 64}, {"bert-base", 64}}) {
    INFO(name);
    // The Llama in bf16, as it trains (PyTorch's flash kernel has no fp32 form); the others in fp32.
    const Graph g = training_graph(name, 2, seq, seq > 0 && name != "bert-base" ? Precision::BF16 : Precision::FP32);
    const FittedCoverage c = static_cast<const FittedCostModel&>(*model).coverage(g);
    CHECK(c.fitted > 0);
    CHECK(c.measured == 0);
    INFO("missing: " << join(c.missing_classes));
    REQUIRE(c.missing_classes.empty());  // every class these models need is in the file
    std::map<KernelFamily, int> seen;
    for (const Op& op : g.ops()) {
      const auto shapes = op_kernel_shapes(s, g, op);
      if (!shapes || (op.flops <= 0 && op.bytes_read == 0 && op.bytes_written == 0)) continue;
      for (const KernelShape& k : *shapes) ++seen[k.family];
      const TimeNs t = model->cost(g, op).duration_ns;
      CHECK(std::llabs(t - by_hand(s, g, op)) <= 1);
      CHECK(t > 0);
    }
    if (name == "qwen2.5-0.5b") {
      CHECK(seen[KernelFamily::SdpaFwd] > 0);
      CHECK(seen[KernelFamily::SdpaBwd] > 0);
      CHECK(seen[KernelFamily::Gemm] > 0);
    } else if (name == "mobilenet_v2") {
      CHECK(seen[KernelFamily::ConvWgrad] > 0);
      CHECK(seen[KernelFamily::BatchNorm] > 0);
    }
  }
}

TEST_CASE("a biased convolution's op is priced with its bias's add and its gradient's sum (AlexNet)") {
  const GpuSpec s = fitted_spec(all_classes());
  const auto model = make_cost_model(s);
  const Graph g = training_graph("alexnet", 2);
  int forward = 0, filter = 0;
  for (const Op& op : g.ops()) {
    if (op.kind != OpKind::Conv2d && op.kind != OpKind::Conv2dBwdData && op.kind != OpKind::Conv2dBwdFilter) continue;
    INFO(op.name);
    REQUIRE(op.attr(Attr::bias) == 1);
    const auto shapes = op_kernel_shapes(s, g, op);
    REQUIRE(shapes);
    if (op.kind == OpKind::Conv2dBwdData) {
      CHECK(shapes->size() == 1);
      continue;
    }
    REQUIRE(shapes->size() == 2);
    const TensorId y = op.kind == OpKind::Conv2d ? op.outputs[0] : op.inputs[0];  // the output, or its gradient
    const double y_bytes = static_cast<double>(g.tensor(y).bytes);
    if (op.kind == OpKind::Conv2d) {
      ++forward;
      CHECK((*shapes)[1].family == KernelFamily::Elementwise);
      CHECK((*shapes)[1].bytes == Approx(2 * y_bytes).epsilon(0.01));
    } else {
      ++filter;
      CHECK((*shapes)[1].family == KernelFamily::Reduction);
      CHECK((*shapes)[1].bytes == Approx(y_bytes).epsilon(0.01));
    }
    CHECK(std::llabs(model->cost(g, op).duration_ns - by_hand(s, g, op)) <= 1);
  }
  CHECK(forward == 5);  // AlexNet's five convolutions
  CHECK(filter == 5);
}

TEST_CASE("a fitted class's time grows with the kernel's size") {
  const GpuSpec s = fitted_spec(all_classes());
  const auto model = make_cost_model(s);
  TimeNs last = 0;
  for (int64_t batch : {1, 2, 4, 8, 16, 32}) {
    const Graph g = training_graph("resnet18", batch);
    for (const Op& op : g.ops())
      if (op.kind == OpKind::Conv2dBwdFilter && op.name.find("layer3.0.conv1") != std::string::npos) {
        const TimeNs t = model->cost(g, op).duration_ns;
        CHECK(t >= last);
        last = t;
      }
  }
  CHECK(last > 0);
}

TEST_CASE("an exact kernel_times entry wins, and an op of no fitted class keeps the roofline") {
  FittedKernels f = all_classes();
  f.classes.erase("batchnorm.f32");
  GpuSpec s = fitted_spec(f);
  const Graph g = training_graph("resnet18", 2);
  const Op* conv = nullptr;
  const Op* bn = nullptr;
  for (const Op& op : g.ops()) {
    if (!conv && op.kind == OpKind::Conv2d) conv = &op;
    if (!bn && op.kind == OpKind::BatchNorm) bn = &op;
  }
  REQUIRE(conv != nullptr);
  REQUIRE(bn != nullptr);
  s.kernel_times[op_signature(g, *conv)] = 777;
  const auto model = make_cost_model(s);
  RooflineCostModel roofline(s, round_roofline());
  CHECK(model->cost(g, *conv).duration_ns == 777);
  CHECK(model->cost(g, *bn).duration_ns == roofline.cost(g, *bn).duration_ns);
  const FittedCoverage c = static_cast<const FittedCostModel&>(*model).coverage(g);
  CHECK(c.measured == 1);
  CHECK(c.missing_classes == std::vector<std::string>{"batchnorm.f32"});
  CHECK(model->report(g)["classes_not_fitted"].size() == 1);
}

TEST_CASE("a hardware file without the fitted section prices as before") {
  const Hardware h = load_hardware("h200-datasheet");
  CHECK(h.spec.kernel_model == "roofline");
  CHECK(h.spec.fitted_kernels.empty());
  CHECK(dynamic_cast<const RooflineCostModel*>(h.kernels.get()) != nullptr);
}

TEST_CASE("a sweep timed with the host's dispatch inside prices the device with the roofline's fixed cost instead") {
  // Same classes, once as a sweep of device times and once as one of CUDA events around each call: the second's
  // fixed costs are the host's dispatch, so every fitted kernel loses its class's fixed_us and gains the
  // roofline's kernel_fixed_us (the test GPU's); the other terms stay.
  const GpuSpec device_timed = fitted_spec(all_classes());
  FittedKernels with_dispatch = all_classes();
  with_dispatch.fixed_includes_dispatch = true;
  const GpuSpec event_timed = fitted_spec(with_dispatch);
  const auto device_model = make_cost_model(device_timed);
  const auto event_model = make_cost_model(event_timed);
  const Graph g = training_graph("resnet18", 2);
  const double kernel_fixed_us = device_timed.kernel_model_params.get_double("kernel_fixed_us");  // round_spec's 1 us
  int checked = 0;
  for (const Op& op : g.ops()) {
    const auto shapes = op_kernel_shapes(device_timed, g, op);
    if (!shapes || shapes->empty() || op.flops + op.bytes_read + op.bytes_written == 0) continue;
    double fixed_us = 0;
    for (const KernelShape& k : *shapes) fixed_us += find_class(device_timed.fitted_kernels, k)->fixed_us - kernel_fixed_us;
    INFO(op.name);
    CHECK(static_cast<double>(device_model->cost(g, op).duration_ns - event_model->cost(g, op).duration_ns) ==
          Approx(fixed_us * 1e3).margin(2));
    ++checked;
  }
  CHECK(checked > 50);
}

TEST_CASE("fp32 attention is priced as the memory-efficient kernel's 3xTF32: the TF32 class, three products each") {
  FittedKernels f = all_classes();
  f.classes["sdpa_fwd.tf32"] = FittedKernelClass{0, 8.0, 0, 0, 24};
  f.classes["sdpa_bwd.tf32"] = FittedKernelClass{0, 7.5, 0, 0, 24};
  GpuSpec s = fitted_spec(f);
  const Graph g32 = training_graph("qwen2.5-0.5b", 2, 64, Precision::FP32);
  const Graph g16 = training_graph("qwen2.5-0.5b", 2, 64, Precision::BF16);
  auto first = [](const Graph& g, OpKind k) -> const Op& {
    for (const Op& op : g.ops())
      if (op.kind == k) return op;
    FAIL("no op of that kind");
    return g.ops().front();
  };
  for (OpKind k : {OpKind::FlashAttention, OpKind::FlashAttentionBwd}) {
    const auto fp32 = op_kernel_shapes(s, g32, first(g32, k));
    const auto bf16 = op_kernel_shapes(s, g16, first(g16, k));
    REQUIRE(fp32->size() == 1);
    REQUIRE(bf16->size() == 1);
    CHECK(fp32->front().path == MathPath::Tf32);  // whatever allow_tf32 says (the matmuls stay on CUDA cores)
    CHECK(fp32->front().flops == Approx(kFastF32Products * bf16->front().flops));
    CHECK(class_candidates(fp32->front()).front() ==
          (k == OpKind::FlashAttention ? "sdpa_fwd.tf32" : "sdpa_bwd.tf32"));
    CHECK(make_cost_model(s)->cost(g32, first(g32, k)).duration_ns == by_hand(s, g32, first(g32, k)));
  }
  // A GPU without TF32 runs the kernels' CUDA-core fallback: the fp32 products as they are.
  s.peak_tf32 = 0;
  const auto simt = op_kernel_shapes(s, g32, first(g32, OpKind::FlashAttention));
  CHECK(simt->front().path == MathPath::CudaCore);
  CHECK(class_candidates(simt->front()).front() == "sdpa_fwd.cuda_core");
}
