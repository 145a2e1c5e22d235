// The Llama-family zoo presets against Hugging Face's training steps recorded by `dlsim import-torch` (PyTorch 2.11,
// transformers 5, mixed-bf16, AdamW, batch 1): parameters, saved-for-backward bytes and the live peak under dlsim's
// lowering, without checkpointing and with Hugging Face's (against the zoo's checkpoint every=1). Each byte that
// differs is named (docs/models.md, "Against a recorded step"); what remains are things a step recorded on fake
// tensors does and a real one does not.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>

#include "experiment/experiment.h"
#include "experiment/run_experiment.h"
#include "workloads/llama_models.h"
#include "workloads/torch_step.h"
#include "workloads/zoo.h"

using namespace dlsim;

namespace {

std::string zoo_step_dir() { return std::string(DLSIM_SOURCE_DIR) + "/workloads/testdata/torch_steps/"; }

// Without PyTorch's cuBLAS workspaces (hw/cublas_workspace.h): the recording's count has none.
ExperimentResult run_zoo_step(const std::string& model, int64_t seq, bool checkpointed) {
  const std::string yaml = "{model: " + model + ", batch: 1, seq_len: " + std::to_string(seq) +
                           ", precision: mixed-bf16, optimizer: adamw, hw: h100-sxm, "
                           "hw_override: {memory: {total_mib: 4000000, cublas_workspace_kib: 0, cublaslt_workspace_kib: "
                           "0}}, iterations: 2, pool: cuda-malloc, swap: " +
                           (checkpointed ? "{name: checkpoint, every: 1}" : "none") + ", concurrency: serial}";
  INFO(yaml);
  return run_experiment(experiment_from_yaml(YAML::Load(yaml), "zoo_torch_step_test"));
}

// The most live bytes over the recorded ops of one phase (storages alive while the op runs, as the summary's peak).
uint64_t recorded_phase_peak(const TorchStepFile& f, const std::string& phase) {
  const size_t n = f.ops.size();
  std::vector<int64_t> delta(n + 1, 0);
  int64_t live = 0;
  for (const TorchStepStorage& s : f.storages) {
    if (s.host) continue;
    const auto bytes = static_cast<int64_t>(s.bytes);
    if (s.allocated_at) delta[static_cast<size_t>(*s.allocated_at)] += bytes;
    else live += bytes;
    delta[s.freed_at ? static_cast<size_t>(*s.freed_at) : n] -= bytes;
  }
  uint64_t peak = 0;
  for (size_t k = 0; k < n; ++k) {
    live += delta[k];
    if (f.ops[k].phase == phase) peak = std::max(peak, static_cast<uint64_t>(live));
  }
  return peak;
}

}  // namespace

TEST_CASE("the Llama-family zoo's live peak against recorded two-decoder-layer steps") {
  // Sequence 64: the step's peak is AdamW's foreach sqrt beside every gradient, in both. Llama-3-8B's layers agree
  // to the kilobyte. Qwen2.5's recording peaks earlier, where the tied embedding's two gradients meet: autograd sums
  // a fake tensor (a tensor subclass) out of place, a real one in place into the buffer it owns, as the zoo does;
  // its optimizer phase is the zoo's peak.
  for (const std::string model : {"qwen2.5-0.5b", "llama3-8b"})
    for (const bool checkpointed : {false, true}) {
      INFO(model << (checkpointed ? " checkpointed" : ""));
      const TorchStepFile f =
          read_torch_step(zoo_step_dir() + model + "-2-layers-" + (checkpointed ? "hf" : "none") + ".torchstep.json");
      const ExperimentResult r = run_zoo_step(zoo_step_dir() + model + "-2-layers.config.json", 64, checkpointed);
      const uint64_t recorded = model == "llama3-8b" ? f.peak_live_bytes : recorded_phase_peak(f, "optimizer");
      if (model == "llama3-8b") CHECK(recorded_phase_peak(f, "optimizer") == f.peak_live_bytes);
      CHECK(std::llabs(static_cast<long long>(r.peak_live_bytes) - static_cast<long long>(recorded)) <= 1024);
    }
}

TEST_CASE("the Llama-family presets at sequence 2048 against Hugging Face's recorded steps, within 1 %") {
  // The summaries of the four full-size recordings (the traces themselves are 4-7 MB each).
  std::ifstream in(zoo_step_dir() + "llama_presets_s2048.summary.json");
  REQUIRE(in.good());
  const nlohmann::json steps = nlohmann::json::parse(in)["steps"];
  REQUIRE(steps.size() == 4);
  for (const nlohmann::json& s : steps) {
    const std::string model = s["model"].get<std::string>();
    const bool checkpointed = s["checkpointing"].get<std::string>() == "hf";
    INFO(model << (checkpointed ? " checkpointed" : ""));
    const nlohmann::json& t = s["summary"];
    const LlamaConfig c = model == "llama3-8b" ? llama3_8b_config() : qwen2_5_0_5b_config();
    const int64_t seq = 2048;
    // The recording's fake-tensor mask: transformers 5 never skips the causal mask on fake tensors (its packed-
    // sequence check cannot read their values); each layer's SDPA keeps a (1, 1, S, S) bf16 mask, and the model
    // holds one bool mask for all layers through the forward pass. A real step has neither (is_causal=True).
    const int64_t saved_masks = c.layers * seq * seq * 2, held_mask = seq * seq;
    ModelOptions o;
    o.batch = 1;
    o.seq_len = seq;
    o.training.precision = Precision::MixedBF16;
    o.training.optimizer = Optimizer::AdamW;
    const Graph fwd = build_forward_graph(model, o);
    const ModelSummary zs = summarize(fwd, make_training_graph(fwd, o.training));
    CHECK(zs.params == t["parameters"].get<uint64_t>());
    const int64_t recorded_saved = t["saved_for_backward_bytes"].get<int64_t>();
    const ExperimentResult r = run_zoo_step(model, seq, checkpointed);
    const int64_t recorded_peak = t["peak_live_bytes"].get<int64_t>(), peak = static_cast<int64_t>(r.peak_live_bytes);
    // Within 1 % of the recording less the masks alive at its peak (all layers' kept ones in Qwen2.5's backward,
    // the held one in its checkpointed forward, none in Llama-3-8B's optimizer step).
    const int64_t masks_at_peak = model == "llama3-8b" ? 0 : checkpointed ? held_mask : saved_masks;
    CHECK(std::abs(static_cast<double>(peak) / static_cast<double>(recorded_peak - masks_at_peak) - 1.0) < 0.01);
    if (!checkpointed) {
      // Saved: the masks, the 8-byte labels view (batch 1: PyTorch keeps the padded labels, the zoo its shifted
      // copy) and nll_loss's 4-byte total_weight.
      CHECK(static_cast<int64_t>(zs.saved_for_backward_bytes) - recorded_saved == -saved_masks - 8 - 4);
    }
    if (model == "llama3-8b") {
      // The peak is AdamW's foreach sqrt beside every gradient, checkpointed or not.
      CHECK(s["peak_by_phase"]["optimizer"]["bytes"].get<int64_t>() == recorded_peak);
      CHECK(std::llabs(peak - recorded_peak) <= 64 * 1024);
    } else if (!checkpointed) {
      // The peak is the loss's backward (3 x 1.16 GiB of fp32 log-probabilities and their gradients), the masks
      // all alive there.
      CHECK(s["peak_by_phase"]["backward"]["bytes"].get<int64_t>() == recorded_peak);
      CHECK(std::llabs(peak - (recorded_peak - saved_masks)) <= 64 * 1024);
    } else {
      // The peak is the loss's forward: the fp32 logits and log-probabilities, the bf16 logits and the last hidden
      // state the forward still holds, autocast's cached weight casts. Beside the one mask, the recording holds
      // the q/k/v bias casts in autocast's cache (freed here after their linear: no backward reads them).
      CHECK(s["peak_by_phase"]["forward"]["bytes"].get<int64_t>() == recorded_peak);
      const int64_t rest = peak - (recorded_peak - held_mask);
      CHECK(rest <= 0);
      CHECK(rest >= -128 * 1024);
    }
  }
}
