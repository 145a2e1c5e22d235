// PyTorch's eager host on whole models (hw/eager_host_model.h, docs/host.md), with the fitted hardware files
// h100-sxm and h200 (over their kernel-model files h100-sxm-fitted and h200-fitted): eager is never faster than the CUDA-graph replay, the replay does not see the
// host model, and the host's and the device's busy times say which bounds the step.
#include <catch2/catch.hpp>

#include <string>

#include <yaml-cpp/yaml.h>

#include "experiment/experiment.h"
#include "experiment/run_experiment.h"

using namespace dlsim;

namespace {

ExperimentResult run_host(const std::string& model, int batch, const std::string& hw, const std::string& launch,
                          const std::string& hw_override = "{}", const std::string& extra = "") {
  return run_experiment(experiment_from_yaml(
      YAML::Load("{model: " + model + ", batch: " + std::to_string(batch) + ", hw: " + hw +
                 ", pool: pytorch-caching, swap: none, concurrency: serial, iterations: 2, launch: " + launch +
                 ", hw_override: " + hw_override + extra + "}"),
      "eager-host"));
}

}  // namespace

TEST_CASE("eager host: eager is never faster than the CUDA-graph replay, which ignores the host model") {
  struct Case {
    const char* model;
    int batch;
  };
  for (const auto& [base, hw] : {std::pair<std::string, std::string>{"h100-sxm-fitted", "h100-sxm"},
                                 std::pair<std::string, std::string>{"h200-fitted", "h200"}}) {
    for (const Case c : {Case{"mobilenet_v2", 1}, Case{"resnet50", 32}, Case{"googlenet", 32}, Case{"vgg16", 64},
                         Case{"bert-base", 8}}) {
      INFO(hw << " " << c.model << " batch " << c.batch);
      const ExperimentResult eager = run_host(c.model, c.batch, hw, "eager");
      const ExperimentResult graph = run_host(c.model, c.batch, hw, "cuda-graph");
      CHECK(eager.iteration_time_us >= graph.iteration_time_us);
      CHECK(eager.host_time_us > graph.host_time_us);
      CHECK(eager.device_time_us == Approx(graph.device_time_us).epsilon(0.01));
      // The replay is the base file's: the host model changes nothing under launch: cuda-graph.
      CHECK(graph.iteration_time_us == run_host(c.model, c.batch, base, "cuda-graph").iteration_time_us);
      // The steady-state step takes at least the larger of the two busy times.
      CHECK(eager.iteration_time_us >= std::max(eager.host_time_us, eager.device_time_us) - 1e-3);
    }
  }
}

TEST_CASE("eager host: many small ops at batch 1 are bound by the host, a large-batch VGG by the device") {
  for (const std::string hw : {"h100-sxm", "h100-sxm-pytorch", "h200"}) {
    INFO(hw);
    const ExperimentResult small = run_host("mobilenet_v2", 1, hw, "eager");
    CHECK(small.host_bound());
    CHECK(small.host_time_us > 3 * small.device_time_us);
    CHECK(to_json(small, false)["bound"] == "host");
    const ExperimentResult vgg = run_host("vgg16", 128, hw, "eager");
    CHECK_FALSE(vgg.host_bound());
    CHECK(vgg.device_time_us > 10 * vgg.host_time_us);
    CHECK(to_json(vgg, false)["bound"] == "device");
  }
  // Without the section a launch costs the host launch_overhead_us (4.25 us on h100-sxm-harness, the harness's
  // C++ launch), as before the model: one per op, a sixth of PyTorch's host time for this step.
  // The first step preallocated: after a lazy one (experiment/first_step.h) the second iteration, the one
  // reported here, may still open a segment, whose cudaMalloc the host waits for.
  const ExperimentResult before = run_host("mobilenet_v2", 1, "h100-sxm-harness", "eager", "{}", ", first_step: preallocated");
  CHECK(before.host_time_us == Approx(4.25 * static_cast<double>(before.ops)));
  CHECK(before.host_time_us * 5 < run_host("mobilenet_v2", 1, "h100-sxm", "eager").host_time_us);
}
