// ZeRO-Offload proper (issue 32): `swap: zero-offload` on `parallel: {zero: 2, dp: N}` keeps each rank's partition
// of the optimizer on the host (parallel/zero_graph.cc), checked against the partition sizes of
// parallel/model_state_sharding.h; every run here passes the independent plan check inside run_experiment.
#include <catch2/catch.hpp>

#include "common/config_error.h"
#include "experiment/experiment.h"
#include "experiment/experiment_graph.h"
#include "experiment/run_experiment.h"
#include "parallel/model_state_sharding.h"
#include "workloads/shape.h"

using namespace dlsim;

namespace {

Experiment zo_experiment(const std::string& parallel) {
  const std::string text = "model: cifar-resnet20\nbatch: 8\nhw: h100-sxm\npool: pytorch-caching\nswap: zero-offload\n"
                           "concurrency: serial\niterations: 2\noptimizer: adamw\n" +
                           (parallel.empty() ? "" : "parallel: " + parallel + "\n");
  return experiment_from_yaml(YAML::Load(text), "exp.yaml");
}

uint64_t zo_report(const ExperimentResult& r, const char* key) {
  return to_json(r, false).at("swap_report").at(key).get<uint64_t>();
}

// Rank 0's partition of every trained parameter, in elements: dim-0 chunks as FSDP2 and dlsim's ZeRO cut them.
uint64_t zo_partition_elements(const Experiment& e, int ranks) {
  const Graph g = build_experiment_graph(e);
  uint64_t elems = 0;
  for (const Tensor& t : g.tensors()) {
    if (!t.learnable) continue;
    parallel::ModelParameter p;
    p.name = t.name;
    p.shape = t.shape;
    p.element_bytes = static_cast<int64_t>(dtype_bytes(t.dtype));
    const parallel::FsdpLocalShard s = parallel::fsdp_local_shard(p, ranks, 0);
    elems += static_cast<uint64_t>(s.local_bytes) / dtype_bytes(t.dtype);
  }
  return elems;
}

}  // namespace

TEST_CASE("zero-offload on ZeRO-2: the host holds and steps one rank's partition") {
  const ExperimentResult plain = run_experiment(zo_experiment(""));
  const ExperimentResult one = run_experiment(zo_experiment("{zero: 2, dp: 1}"));
  REQUIRE_FALSE(plain.oom);
  CHECK(to_json(one, false) == to_json(plain, false));

  const ExperimentResult four = run_experiment(zo_experiment("{zero: 2, dp: 4}"));
  REQUIRE_FALSE(four.oom);
  const uint64_t part = zo_partition_elements(zo_experiment(""), 4);
  const uint64_t whole = zo_partition_elements(zo_experiment(""), 1);
  REQUIRE(part < whole / 3);
  // fp32 model: the partition's gradient goes out and its weights come back, 4 bytes an element; the host keeps
  // the master partition, AdamW's two moments and a gradient buffer, 16 bytes an element (DeepSpeed's CPU Adam).
  CHECK(zo_report(four, "gradient_bytes_to_host") == 4 * part);
  CHECK(zo_report(four, "weight_bytes_from_host") == 4 * part);
  CHECK(zo_report(four, "host_state_bytes") == 16 * part);
  CHECK(zo_report(plain, "host_state_bytes") == 16 * whole);
  CHECK(zo_report(four, "parameters") == part);
  // The updated partitions are all-gathered into the replicas after the step.
  CHECK(four.collectives.at("all_gather").at("count").get<int>() == 1);
  CHECK(four.collectives.at("reduce_scatter").at("count").get<int>() > 0);
}

TEST_CASE("zero-offload needs a layout that partitions the optimizer") {
  try {
    (void)run_experiment(zo_experiment("{dp: 4}"));
    FAIL("dp with zero-offload ran");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "swap");
    CHECK(e.file() == "exp.yaml");
    CHECK(std::string(e.what()).find("zero: 2") != std::string::npos);
  }
  try {
    (void)run_experiment(zo_experiment("{zero: 1, dp: 4}"));
    FAIL("zero 1 with zero-offload ran");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "zero");
    CHECK(e.line() == 9);  // the parallel: line
  }
  // FSDP's shards already partition the state: the host holds the rank's shard.
  const ExperimentResult fsdp = run_experiment(zo_experiment("{fsdp: 4}"));
  REQUIRE_FALSE(fsdp.oom);
  CHECK(zo_report(fsdp, "host_state_bytes") == 16 * zo_partition_elements(zo_experiment(""), 4));
}
