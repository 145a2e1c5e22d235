// The zoo's gpt2-small (its default: GPT-2 as transformers 5 runs it, SDPA attention and the written-out gelu_new)
// against Hugging Face's GPT2LMHeadModel recorded by `dlsim import-torch` (PyTorch 2.11, transformers 5.24, AdamW),
// from the figures validate/torch/torch_step_gpt2_table.py wrote (workloads/testdata/torch_steps/gpt2.summary.json).
// The recording's CPU dispatch is sized to CUDA's by that script (one-byte dropout masks, no fake-tensor causal
// mask); docs/models.md ("Against a recorded step") names every byte that is left.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>

#include "experiment/experiment.h"
#include "experiment/run_experiment.h"
#include "workloads/zoo.h"

using namespace dlsim;

namespace {

nlohmann::json gpt2_rows() {
  std::ifstream in(std::string(DLSIM_SOURCE_DIR) + "/workloads/testdata/torch_steps/gpt2.summary.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in)["rows"];
}

ModelOptions options_of(const nlohmann::json& r) {
  ModelOptions o;
  o.batch = r["batch"].get<int64_t>();
  o.seq_len = r["seq_len"].get<int64_t>();
  o.training.precision = r["precision"].get<std::string>() == "fp32" ? Precision::FP32 : Precision::MixedBF16;
  o.training.optimizer = Optimizer::AdamW;
  return o;
}

// Without PyTorch's cuBLAS workspaces (hw/cublas_workspace.h): the recording's count has none.
uint64_t zoo_peak(const nlohmann::json& r) {
  const std::string yaml = "{model: gpt2-small, batch: " + std::to_string(r["batch"].get<int64_t>()) +
                           ", seq_len: " + std::to_string(r["seq_len"].get<int64_t>()) + ", precision: " +
                           r["precision"].get<std::string>() + ", optimizer: adamw, hw: h200, "
                           "hw_override: {memory: {total_mib: 4000000, cublas_workspace_kib: 0, cublaslt_workspace_kib: "
                           "0}}, pool: pytorch-caching, swap: none, "
                           "concurrency: serial}";
  INFO(yaml);
  return run_experiment(experiment_from_yaml(YAML::Load(yaml), "zoo_torch_step_gpt2_test")).peak_live_bytes;
}

}  // namespace

TEST_CASE("gpt2-small against Hugging Face's recorded GPT-2 step with CUDA's masks: within 1 % and each byte named") {
  int compared = 0;
  for (const nlohmann::json& r : gpt2_rows()) {
    if (r["config"] != "attn-pdrop-0") continue;  // the CPU's math path (attention dropout): shown, not compared
    const ModelOptions o = options_of(r);
    INFO(r["precision"].get<std::string>() << " batch " << o.batch << " seq " << o.seq_len);
    const Graph fwd = build_forward_graph("gpt2-small", o);
    const ModelSummary zs = summarize(fwd, make_training_graph(fwd, o.training));
    CHECK(zs.params == r["parameters"][0].get<uint64_t>());
    const auto saved = static_cast<int64_t>(zs.saved_for_backward_bytes), peak = static_cast<int64_t>(zoo_peak(r));
    const int64_t trace_saved = r["trace_saved_cuda"].get<int64_t>(), trace_peak = r["trace_peak_cuda"].get<int64_t>();
    // What the recording keeps and the zoo does not: the (1, S) int64 position ids the embedding saves (the zoo's
    // are an input) and nll_loss's 4-byte total_weight.
    const int64_t not_built = o.seq_len * 8 + 4;
    // CPU autocast runs gelu_new in bf16; CUDA's runs pow in fp32, so pow keeps the fp32 cast of x and tanh,
    // 1 + tanh (and the product) are fp32: 4 + 2 + 2 bytes an element more, the bf16 x itself not kept (-2).
    const int64_t gelu_autocast =
        o.training.precision == Precision::FP32 ? 0 : 6 * o.batch * o.seq_len * 3072 * 12;
    CHECK(saved - trace_saved == gelu_autocast - not_built);
    if (gelu_autocast == 0) {
      CHECK(std::abs(static_cast<double>(saved) / static_cast<double>(trace_saved) - 1.0) < 0.01);
      CHECK(std::abs(static_cast<double>(peak) / static_cast<double>(trace_peak) - 1.0) < 0.01);
    }
    // The peak: AdamW's step at batch 2 x 256 (-4 KiB; no activation alive), the loss's backward at 8 x 1024
    // (+64 KiB, and the GELU's fp32 tensors under autocast).
    const int64_t gelu_at_peak = o.batch == 2 ? 0 : gelu_autocast;
    CHECK(std::llabs(peak - trace_peak - gelu_at_peak) <= 64 * 1024);
    ++compared;
  }
  CHECK(compared == 4);  // fp32 and mixed-bf16, batch 2 x 256 and 8 x 1024
}
