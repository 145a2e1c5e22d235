// Tensor parallelism through the parallel: section, alone and composed with FSDP and DDP (issue 32): the section
// passes tp to the Llama builder, the data-parallel layout then shards one tp rank's graph over its own ranks,
// and its collectives are placed across nodes (tp inside a node). Checked by hand on a two-layer Llama.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>

#include "common/config_error.h"
#include "experiment/experiment.h"
#include "experiment/run_experiment.h"
#include "workloads/tensor_parallel.h"

using namespace dlsim;

namespace {

// Two layers, hidden 256, 8 heads of 32 over 4 key/value heads, an MLP of 512, a vocabulary of 1,000: the
// config of workloads/tensor_parallel_test.cc, whose tp-2 shapes are worked there.
std::string tp_tiny_config() {
  // one file per process: CTest runs this binary's test cases in parallel processes, which would race on one name
  const std::filesystem::path p = std::filesystem::temp_directory_path() /
                                  ("dlsim-parallel-tp-test-config-" + std::to_string(::getpid()) + ".json");
  std::ofstream(p) << R"({"model_type": "llama", "hidden_act": "silu", "vocab_size": 1000, "hidden_size": 256,
    "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 4,
    "max_position_embeddings": 1024, "tie_word_embeddings": false, "attention_bias": false})";
  return p.string();
}

// The parallel: section is on line 10.
Experiment tp_experiment(const std::string& parallel, const std::string& model = "") {
  const std::string text = "model: " + (model.empty() ? tp_tiny_config() : model) +
                           "\nbatch: 2\nseq_len: 64\nhw: h100-sxm\npool: pytorch-caching\nswap: none\n"
                           "concurrency: serial\niterations: 2\noptimizer: adamw\n" +
                           (parallel.empty() ? "" : "parallel: " + parallel + "\n");
  return experiment_from_yaml(YAML::Load(text), "exp.yaml");
}

// The bytes of the learnable tensors a rank keeps as its weights (its shard under FSDP).
uint64_t tp_weight_bytes(const PreparedExperiment& p) {
  uint64_t b = 0;
  for (const Tensor& t : p.graph.tensors())
    if (t.learnable && p.categories.at(static_cast<size_t>(t.id)) == parallel::MemoryCategory::Weights) b += t.bytes;
  return b;
}

ConfigError tp_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("parallel tp: {fsdp: 1, tp: 1} and {tp: 1} are exactly the plain run") {
  const ExperimentResult plain = run_experiment(tp_experiment(""));
  REQUIRE_FALSE(plain.oom);
  for (const char* one : {"{fsdp: 1, tp: 1}", "{tp: 1}", "{dp: 1, tp: 1}"}) {
    CAPTURE(one);
    CHECK(to_json(run_experiment(tp_experiment(one)), false) == to_json(plain, false));
  }
}

TEST_CASE("parallel tp: {fsdp: 2, tp: 2} by hand: weights a quarter, all-gathers and all-reduces over 2 ranks") {
  const PreparedExperiment plain = prepare_experiment(tp_experiment(""));
  const PreparedExperiment p = prepare_experiment(tp_experiment("{fsdp: 2, tp: 2}"));
  // Plain: 1,692,928 fp32 parameters = 6,771,712 bytes; a quarter is 1,692,928 bytes. One tp-2 rank holds 853,248
  // (tensor_parallel_test.cc: the vocabulary padded to 1,024 rows, the 1,280 norm elements replicated), every dim 0
  // even, so FSDP's two shards are exact halves: 426,624 elements = 1,706,496 bytes. Above the quarter by 3,392
  // elements: 24 padding rows x 256 x 2 matrices / 4 = 3,072, and the norms' 1,280 / 2 - 1,280 / 4 = 320.
  CHECK(tp_weight_bytes(plain) == 6'771'712);
  CHECK(tp_weight_bytes(p) == 1'706'496);
  CHECK(tp_weight_bytes(p) - tp_weight_bytes(plain) / 4 == 3'392 * 4);

  // FSDP's all-gathers: each unit's tp-sharded parameters, over the 2 FSDP ranks. A layer: 295,424 elements x 4
  // bytes; the root: the embedding and the head (512 x 256 each) and the final norm (256): 262,400 x 4.
  int forward_gathers = 0;
  for (const parallel::CollectiveSite& s : p.collectives) {
    CAPTURE(s.unit);
    CHECK(s.ranks == 2);
    const Op& op = p.graph.op(s.op);
    CHECK(op.attr(Attr::ranks) == 2);
    // TP inside a node: max(1, 8 GPUs / tp 2) = 4 FSDP ranks could share one, capped at the group's 2.
    CHECK(op.attr(Attr::ranks_per_node) == 2);
    if (s.kind != CollectiveKind::AllGather) continue;
    CHECK(s.bytes == (s.unit == "(root)" ? 262'400u * 4 : 295'424u * 4));
    if (s.phase == Phase::Forward) ++forward_gathers;
  }
  CHECK(forward_gathers == 3);
  // The tensor-parallel all-reduces (Megatron's g in forward, f in backward) run over the 2 tp ranks.
  int tp_all_reduces = 0;
  for (const Op& o : p.graph.ops())
    if (o.kind == OpKind::AllReduce) {
      ++tp_all_reduces;
      CHECK(o.attr(Attr::ranks) == 2);
      CHECK(o.attr(Attr::ranks_per_node) == 2);
    }
  CHECK(tp_all_reduces > 0);
  const ExperimentResult r = run_experiment(tp_experiment("{fsdp: 2, tp: 2}"));
  REQUIRE_FALSE(r.oom);
  CHECK(to_json(r, false)["parallel"] == "fsdp=2,tp=2");
}

TEST_CASE("parallel tp: the data-parallel group spans nodes of gpus_per_node / tp ranks") {
  // h100-sxm: 8 GPUs a node. fsdp 8 x tp 2 = 16 GPUs: 4 FSDP ranks a node, over 2 nodes; dp 4 x tp 4: 2 a node.
  const PreparedExperiment f = prepare_experiment(tp_experiment("{fsdp: 8, tp: 2}"));
  REQUIRE_FALSE(f.collectives.empty());
  for (const parallel::CollectiveSite& s : f.collectives) CHECK(f.graph.op(s.op).attr(Attr::ranks_per_node) == 4);
  const PreparedExperiment d = prepare_experiment(tp_experiment("{dp: 4, tp: 4}"));
  REQUIRE_FALSE(d.collectives.empty());
  for (const parallel::CollectiveSite& s : d.collectives) {
    CHECK(s.ranks == 4);
    CHECK(d.graph.op(s.op).attr(Attr::ranks_per_node) == 2);
  }
  // Without tp the collectives keep their default (as many as fit).
  const PreparedExperiment plain_fsdp = prepare_experiment(tp_experiment("{fsdp: 8}"));
  for (const parallel::CollectiveSite& s : plain_fsdp.collectives) CHECK(plain_fsdp.graph.op(s.op).attr(Attr::ranks_per_node) == 0);
}

TEST_CASE("parallel tp: the builder's errors are named at parallel.tp with the section's line") {
  // 8 heads over tp 3: the builder's field, reported where the user wrote tp.
  ConfigError e = tp_error_of([] { prepare_experiment(tp_experiment("{fsdp: 2, tp: 3}")); });
  CHECK(e.file() == "exp.yaml");
  CHECK(e.line() == 10);
  CHECK(e.key() == "parallel.tp");
  CHECK_THAT(e.message(), Catch::Contains("num_attention_heads 8 is not divisible by the tensor-parallel degree tp 3"));
  // 4 key/value heads over tp 8.
  e = tp_error_of([] { prepare_experiment(tp_experiment("{tp: 8}")); });
  CHECK(e.key() == "parallel.tp");
  CHECK_THAT(e.message(), Catch::Contains("num_key_value_heads"));
  // A model built whole: refused when the experiment is read, at the section's line.
  e = tp_error_of([] { tp_experiment("{fsdp: 2, tp: 2}", "gpt2-small"); });
  CHECK(e.line() == 10);
  CHECK(e.key() == "parallel.tp");
  CHECK_THAT(e.message(), Catch::Contains("Llama family only"));
}
