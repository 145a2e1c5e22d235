// Every pool, swap, recompute and concurrency policy on recorded PyTorch steps (workloads/torch_step_graph.h):
// run_experiment checks every run with the independent checkers (memory reuse across streams, the swap-plan
// checker) and throws on a violation, so a run that returns is one whose plan held. And the lowering frees each
// tensor where PyTorch freed its storage: the simulated live peak is the recording's own count.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/config_error.h"
#include "experiment/experiment.h"
#include "experiment/run_experiment.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/pool/pool_policy.h"
#include "workloads/torch_step.h"

using namespace dlsim;

namespace {

std::string recorded(const std::string& name) {
  return std::string(DLSIM_SOURCE_DIR) + "/workloads/testdata/torch_steps/" + name + ".torchstep.json";
}

ExperimentResult run_recorded(const std::string& step, int64_t batch, const std::string& pool, const std::string& swap,
                              const std::string& concurrency) {
  // Without PyTorch's cuBLAS workspaces (hw/cublas_workspace.h adds them at run time, outside the recording), so
  // that a live peak is the recorded tensors' own.
  const std::string yaml = "{model: " + recorded(step) + ", batch: " + std::to_string(batch) +
                           ", hw: h100-sxm, hw_override: {memory: {cublas_workspace_kib: 0, cublaslt_workspace_kib: "
                           "0}}, iterations: 2, pool: " + pool + ", swap: " + swap +
                           ", concurrency: " + concurrency + "}";
  INFO(yaml);
  return run_experiment(experiment_from_yaml(YAML::Load(yaml), "torch_step_run_test"));
}

// (step, batch): a CNN recorded with Debian's torch 1.13, a checkpointed MLP with AdamW, and two decoder layers of
// Qwen2.5-0.5B under mixed-bf16 and AdamW recorded with PyTorch 2.11 and transformers.
const std::vector<std::pair<std::string, int64_t>> kSteps = {
    {"tiny_conv", 2}, {"tiny_mlp_adamw_checkpointed", 2}, {"qwen2.5-0.5b-2-layers-none", 1}};

}  // namespace

TEST_CASE("every pool runs a recorded step") {
  for (const auto& [step, batch] : kSteps)
    for (const std::string& pool : pool_registry().names()) {
      const ExperimentResult r = run_recorded(step, batch, pool, "none", "serial");
      CHECK_FALSE(r.oom);
      CHECK(r.peak_live_bytes > 0);
      CHECK(r.peak_reserved_bytes >= r.peak_live_bytes);
    }
}

TEST_CASE("a recorded step's live peak under dlsim's lowering is PyTorch's own count") {
  for (const auto& [step, batch] : kSteps) {
    INFO(step);
    const ExperimentResult r = run_recorded(step, batch, "cuda-malloc", "none", "serial");
    CHECK(r.peak_live_bytes == read_torch_step(recorded(step)).peak_live_bytes);
  }
}

TEST_CASE("every concurrency policy runs a recorded step") {
  for (const auto& [step, batch] : kSteps)
    for (const std::string& c : concurrency_registry().names()) {
      const ExperimentResult r = run_recorded(step, batch, "pytorch-caching", "none", c);
      CHECK_FALSE(r.oom);
    }
}

TEST_CASE("every swap and recompute policy runs a recorded step, its plan checked") {
  const std::vector<std::string> policies = {
      "{name: singa, limit_fraction: 0.7}", "{name: vdnn, policy: all}", "save-on-cpu",
      "{name: swapadvisor, limit_fraction: 0.8, population: 3, generations: 1}",
      "{name: fastest-under-limit, limit_fraction: 0.7}", "{name: dtr, limit_fraction: 0.6}",
      "{name: capuchin, limit_fraction: 0.6}", "sqrt", "{name: checkmate, limit_fraction: 0.95, time_limit_s: 5}"};
  for (const auto& [step, batch] : kSteps) {
    for (const std::string& swap : policies) {
      INFO(step << " " << swap);
      if (swap.find("checkmate") != std::string::npos && step != "tiny_conv") continue;  // its MILP: small graphs
      const ExperimentResult r = run_recorded(step, batch, "pytorch-caching", swap, "serial");
      CHECK_FALSE(r.oom);
      CHECK(r.swap["swap_planned_peak_bytes"].get<uint64_t>() == r.peak_live_bytes);
    }
    // `every` segments the blocks the recording found; a model without any is refused, as a zoo model is.
    INFO(step);
    const bool blocks = step != "tiny_conv";
    if (blocks)
      CHECK_FALSE(run_recorded(step, batch, "pytorch-caching", "{name: checkpoint, every: 1}", "serial").oom);
    else
      CHECK_THROWS_AS(run_recorded(step, batch, "pytorch-caching", "{name: checkpoint, every: 1}", "serial"), ConfigError);
    // The offload policies move the optimizer's update ops (AdamUpdate, SgdMomentumUpdate) to the CPU; a recorded
    // step's optimizer is PyTorch's foreach kernels, which they do not take yet: refused, naming the reason.
    for (const char* offload : {"zero-offload", "param-offload"})
      CHECK_THROWS_WITH(run_recorded(step, batch, "pytorch-caching", offload, "serial"),
                        Catch::Contains("has no optimizer step to run on the CPU"));
  }
}
