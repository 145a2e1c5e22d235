#include "validate/calibrate/torch_profile/host_profile_fit.h"

#include <catch2/catch.hpp>

#include "common/config_error.h"
#include "workloads/zoo.h"

namespace dlsim {
namespace {

// The fuzz corpus's hand-written GPU step (fuzz/corpus/torch_profile_json/gpu-step.json): a 500 us ProfilerStep
// with a 20 us cudaStreamSynchronize, the step measured without the profiler at 420 us; a convolution (40 us), batch
// norm's counter (4 us) and batch norm (20 us); the seed at 100 us, autograd's first node at 120 us on the engine's
// thread (30 us, a 3 us gradient sum inside), an AccumulateGrad (8 us); an optimizer span of 100 us holding one
// 50 us foreach op. Matched to CIFAR ResNet-20 at batch 2 (its first convolution and batch norm).
struct HostFitFixture {
  ProfilerTrace trace = load_profiler_trace(std::string(DLSIM_SOURCE_DIR) +
                                            "/fuzz/corpus/torch_profile_json/gpu-step.json");
  Graph graph = [] {
    ModelOptions o;
    o.batch = 2;
    return build_training_graph("cifar-resnet20", o);
  }();
  std::vector<MatchedProfile> profiles;
  HostFitFixture() {
    MatchedProfile p;
    p.trace = &trace;
    p.graph = &graph;
    p.steps = profile_steps(trace);
    profiles.push_back(std::move(p));
    profiles[0].matches.push_back(match_profile_step(trace, profiles[0].steps[0], graph));
  }
};

TEST_CASE("host profile fit: each key is measured from its ops, and the profiler's overhead is scaled out") {
  HostFitFixture f;
  const HostProfileFit fit = fit_host_from_profiles(f.profiles, nullptr);
  CHECK(fit.steps == 1);
  CHECK(fit.profiled_host_us == Approx(480));  // the span less the synchronisation
  CHECK(fit.overhead_factor == Approx(420.0 / 500.0));
  CHECK(fit.target_host_us == Approx(480 * 420.0 / 500.0));
  // What the scale is for; the values rounded to 0.01 us, over the graph's hundreds of ops, move it a little.
  CHECK(fit.predicted_host_us == Approx(fit.target_host_us).epsilon(5e-3));
  const auto key = [&](const std::string& k) { return fit.keys.at(k); };
  CHECK(key("forward_us.conv").profiled_us == 40);
  CHECK(key("forward_us.norm").profiled_us == 20);
  CHECK(key("forward_us.elementwise").profiled_us == 4);  // the counter
  CHECK(key("grad_accumulate_us").profiled_us == 3);
  CHECK(key("extra_kernel_us").profiled_us == 3);
  CHECK(key("param_grad_us").profiled_us == 8);
  CHECK(key("backward_start_us").profiled_us == 20);
  CHECK(key("optimizer_step_us").profiled_us == 50);
  int64_t params = 0;
  for (const Tensor& t : f.graph.tensors()) params += t.learnable ? 1 : 0;
  CHECK(key("optimizer_tensor_us").profiled_us == Approx(50.0 / static_cast<double>(params)));
  // The batch norm's node, less its gradient sum and extra_kernel_us for each further backward op of the graph's.
  int64_t bn_backward = 0;
  for (const Op& op : f.graph.ops())
    bn_backward += op.phase == Phase::Backward && op.forward_op == f.profiles[0].matches[0].forward[1].graph_op &&
                   op.kind != OpKind::GradAccumulate;
  CHECK(key("backward_us.norm").profiled_us == Approx(30 - 3 - 3.0 * static_cast<double>(bn_backward - 1)));
  // Nothing measured a matrix product or a view: stated stand-ins, fitted values scaled like the rest.
  CHECK(key("forward_us.matmul").source == "stand-in: forward_us.elementwise");
  CHECK(key("backward_us.conv").source == "stand-in: forward_us.conv");
  for (const auto& [k, v] : fit.keys) {
    INFO(k);
    CHECK(v.fitted_us == Approx(fit.scale * v.profiled_us).margin(0.006));
  }
  CHECK_THAT(eager_host_section_yaml(fit.spec), Catch::Contains("    param_grad_us: "));
}

TEST_CASE("host profile fit: kept costs that already exceed the measured step are an error, not a negative scale") {
  HostFitFixture f;
  EagerHostSpec base;
  base.backward_ns.fill(1'000'000);  // 1 ms per backward node: more than the whole profiled step
  CHECK_THROWS_WITH(fit_host_from_profiles(f.profiles, &base), Catch::Contains("no positive scale"));
}

}  // namespace
}  // namespace dlsim
