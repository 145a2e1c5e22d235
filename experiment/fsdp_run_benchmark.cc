// Building and simulating one rank's training iteration of Llama-3-70B under FSDP2 over 512 H100s (64 nodes of
// 8): issue 32's SPMD target, a 512-GPU layout simulated as fast as one GPU (one rank's timeline; each
// collective priced for its 512 ranks, hw/collective_op.h). The model is meta-llama/Meta-Llama-3-70B's
// config.json (its figures below, from the Hugging Face Hub), written to a temporary file, since the zoo has no
// 70B preset. The GPU's memory is raised by hw_override so that the whole iteration runs whatever the
// activations need at this sequence (checkpointing is not the point here).
// BM_RunLlama3_70bFsdp64Tp8: the same 512 GPUs as FSDP 64 x tensor parallel 8 with sequence parallel
// (torchtitan's 70B layout: tp inside each 8-GPU node, FSDP across the 64 nodes).
#include <benchmark/benchmark.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "experiment/experiment.h"
#include "experiment/run_experiment.h"

namespace {

// meta-llama/Meta-Llama-3-70B config.json: the fields workloads/llama_models.h reads.
constexpr const char* kLlama3_70bConfig = R"({
  "model_type": "llama", "hidden_act": "silu", "vocab_size": 128256, "hidden_size": 8192,
  "intermediate_size": 28672, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
  "max_position_embeddings": 8192, "tie_word_embeddings": false, "attention_bias": false
})";

std::string llama3_70b_config_path() {
  const std::filesystem::path p = std::filesystem::temp_directory_path() / "dlsim-bench-llama3-70b-config.json";
  std::ofstream(p) << kLlama3_70bConfig;
  return p.string();
}

// A metric of the run, 0 when the run does not report it as a number (an iteration that did not complete).
double number_or_zero(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

void run_llama3_70b(benchmark::State& state, const std::string& parallel) {
  const std::string doc = "{model: " + llama3_70b_config_path() +
                          ", batch: 1, seq_len: 8192, hw: h100-sxm, hw_override: {memory: {total_mib: 4000000}},"
                          " pool: pytorch-caching, swap: none, concurrency: serial, iterations: 2,"
                          " precision: mixed-bf16, optimizer: adamw, parallel: " + parallel + "}";
  const YAML::Node node = YAML::Load(doc);
  bool oom = true;
  for (auto _ : state) {
    const dlsim::ExperimentResult r = dlsim::run_experiment(dlsim::experiment_from_yaml(node, "llama70b-fsdp512.yaml"),
                                                            nullptr, nullptr, false);
    oom = r.oom;
    benchmark::DoNotOptimize(r.iteration_time_us);
    state.counters["iteration_ms"] = r.iteration_time_us / 1000.0;
    state.counters["exposed_comm_ms"] = number_or_zero(r.parallel_metrics, "exposed_communication_time_us") / 1000.0;
    state.counters["mfu"] = number_or_zero(r.parallel_metrics, "mfu");
  }
  if (oom) state.SkipWithError("the iteration ran out of simulated memory");
}

void BM_RunLlama3_70bFsdp512(benchmark::State& state) {
  run_llama3_70b(state, "{fsdp: 512, param_dtype: bf16, reduce_dtype: fp32}");
}
BENCHMARK(BM_RunLlama3_70bFsdp512)->Unit(benchmark::kMillisecond);

void BM_RunLlama3_70bFsdp64Tp8(benchmark::State& state) {
  run_llama3_70b(state, "{fsdp: 64, tp: 8, sequence_parallel: true, param_dtype: bf16, reduce_dtype: fp32}");
}
BENCHMARK(BM_RunLlama3_70bFsdp64Tp8)->Unit(benchmark::kMillisecond);

}  // namespace
