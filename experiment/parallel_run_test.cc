// Data-parallel layouts through the whole run (experiment/run_experiment.h): one rank is the plain run, and the
// memory breakdown of every layout adds up to the simulator's own peaks.
#include <catch2/catch.hpp>

#include "experiment/experiment.h"
#include "experiment/experiment_graph.h"
#include "experiment/run_experiment.h"
#include "common/config_error.h"

using namespace dlsim;

namespace {

Experiment par_experiment(const std::string& parallel, const std::string& extra = "") {
  const std::string text = "model: cifar-resnet20\nbatch: 8\nhw: h100-sxm\npool: pytorch-caching\nswap: none\n"
                           "concurrency: serial\niterations: 2\noptimizer: adamw\n" + extra +
                           (parallel.empty() ? "" : "parallel: " + parallel + "\n");
  return experiment_from_yaml(YAML::Load(text), "exp.yaml");
}

uint64_t par_category(const ExperimentResult& r, const char* at, const char* name) {
  return r.memory_breakdown.at(at).at(name).get<uint64_t>();
}

// The live bytes by par_category at the peak add up to the peak, and the reserved peak is the pool's.
void par_check_sums(const ExperimentResult& r) {
  uint64_t sum = 0;
  for (auto c : parallel::kMemoryCategories) sum += par_category(r, "at_peak_live", parallel::to_string(c));
  CHECK(sum == r.peak_live_bytes);
  CHECK(par_category(r, "at_peak_live", "allocated") == r.peak_live_bytes);
  CHECK(par_category(r, "at_peak_reserved", "reserved") == r.peak_reserved_bytes);
  CHECK(par_category(r, "at_peak_live", "allocator_overhead") ==
        par_category(r, "at_peak_live", "reserved") - par_category(r, "at_peak_live", "allocated"));
}

uint64_t par_learnable_bytes(const Experiment& e) {
  const Graph g = build_experiment_graph(e);
  uint64_t b = 0;
  for (const Tensor& t : g.tensors())
    if (t.learnable) b += t.bytes;
  return b;
}

}  // namespace

TEST_CASE("dp: 1 and fsdp: 1 are exactly the plain run") {
  const ExperimentResult plain = run_experiment(par_experiment(""));
  REQUIRE_FALSE(plain.oom);
  par_check_sums(plain);
  for (const char* one : {"{dp: 1}", "{fsdp: 1}", "{zero: 2, dp: 1}"}) {
    CAPTURE(one);
    const ExperimentResult r = run_experiment(par_experiment(one));
    CHECK(to_json(r, false) == to_json(plain, false));  // every figure, the breakdown too
  }
}

TEST_CASE("the breakdown at the peak: the plain run's categories and every layout's sums") {
  const ExperimentResult plain = run_experiment(par_experiment(""));
  const uint64_t params = par_learnable_bytes(par_experiment(""));
  // Persistent state is alive at any peak: AdamW's two moments of every parameter.
  CHECK(par_category(plain, "at_peak_live", "optimizer_state") == 2 * params);
  CHECK(par_category(plain, "at_peak_live", "communication_buckets") == 0);
  CHECK(par_category(plain, "at_peak_live", "gathered_parameters") == 0);
  CHECK(par_category(plain, "at_peak_live", "activations") > 0);

  const ExperimentResult ddp = run_experiment(par_experiment("{dp: 4}"));
  par_check_sums(ddp);
  CHECK(par_category(ddp, "at_peak_live", "communication_buckets") == params);  // one bucket byte per gradient byte
  CHECK(ddp.peak_live_bytes == plain.peak_live_bytes + params);
  CHECK(ddp.collectives.at("all_reduce").at("bytes").get<uint64_t>() == params);
  CHECK(ddp.collectives.at("all_reduce").at("time_us").get<double>() > 0);
  // The communication figures (experiment/parallel_metrics.h): an image model counts the graph's FLOPs.
  const nlohmann::json dj = to_json(ddp, false);
  CHECK(dj.at("exposed_communication_time_us").get<double>() <= dj.at("communication_time_us").get<double>());
  CHECK(dj.at("images_per_s_per_gpu").get<double>() == Approx(8 / (ddp.iteration_time_us * 1e-6)));
  CHECK(dj.at("mfu_flop_count") == "graph");
  CHECK(dj.at("mfu").get<double>() > 0);
  CHECK(dj.at("mfu").get<double>() < 1);
  CHECK_FALSE(to_json(plain, false).contains("mfu"));

  const ExperimentResult fsdp = run_experiment(par_experiment("{fsdp: 4}"));
  par_check_sums(fsdp);
  CHECK(par_category(fsdp, "at_peak_live", "optimizer_state") < par_category(plain, "at_peak_live", "optimizer_state") / 3);
  CHECK(par_category(fsdp, "at_peak_live", "weights") < par_category(plain, "at_peak_live", "weights"));
  CHECK(fsdp.collectives.at("all_gather").at("count").get<int>() > 0);
  CHECK(fsdp.collectives.at("reduce_scatter").at("count").get<int>() > 0);

  for (const char* layout : {"{fsdp: 4, reshard_after_forward: false, param_dtype: bf16}", "{fsdp: 3, wrap: root}",
                             "{zero: 1, dp: 4}", "{zero: 2, dp: 4}"}) {
    CAPTURE(layout);
    const ExperimentResult r = run_experiment(par_experiment(layout));
    REQUIRE_FALSE(r.oom);
    par_check_sums(r);
    CHECK(par_category(r, "at_peak_live", "optimizer_state") < par_category(plain, "at_peak_live", "optimizer_state") / 2);
  }
}

TEST_CASE("the model states at their peak: the weights, every gradient and AdamW's moments, per layout") {
  const ExperimentResult plain = run_experiment(par_experiment(""));
  const uint64_t params = par_learnable_bytes(par_experiment(""));
  const auto states = [](const ExperimentResult& r, const char* c) { return par_category(r, "at_peak_model_states", c); };
  // fp32, AdamW: once the backward is done every gradient is alive beside the two moments; the weights carry
  // BatchNorm's running statistics too.
  CHECK(states(plain, "gradients") == params);
  CHECK(states(plain, "optimizer_state") == 2 * params);
  CHECK(states(plain, "weights") >= params);
  CHECK(states(plain, "weights") < params + params / 50);
  // ZeRO-1 shards the moments (rank 0 holds full chunks: about a quarter) and keeps every gradient.
  const ExperimentResult z1 = run_experiment(par_experiment("{zero: 1, dp: 4}"));
  CHECK(states(z1, "weights") == states(plain, "weights"));
  CHECK(states(z1, "gradients") == params);
  CHECK(states(z1, "optimizer_state") < 2 * params / 3);
  CHECK(states(z1, "optimizer_state") >= 2 * params / 4);
  // ZeRO-2 keeps the gradients' partitions, and a bucket's full gradients until it is reduced.
  const ExperimentResult z2 = run_experiment(par_experiment("{zero: 2, dp: 4}"));
  CHECK(states(z2, "weights") == states(plain, "weights"));
  CHECK(states(z2, "gradients") < params);
  CHECK(states(z2, "optimizer_state") == states(z1, "optimizer_state"));
  // FSDP shards all three.
  const ExperimentResult f = run_experiment(par_experiment("{fsdp: 4}"));
  CHECK(states(f, "weights") + states(f, "optimizer_state") < (states(plain, "weights") + 2 * params) / 3);
}

TEST_CASE("a layout runs on several streams and with another pool") {
  for (const char* extra : {"pool: cuda-malloc\n", "concurrency: branch-streams\n"}) {
    CAPTURE(extra);
    std::string text = std::string("model: cifar-resnet20\nbatch: 8\nhw: h100-sxm\nswap: none\niterations: 2\n") +
                       "optimizer: adamw\nparallel: {fsdp: 4}\n" + extra +
                       (std::string(extra).starts_with("pool") ? "concurrency: serial\n" : "pool: pytorch-caching\n");
    const ExperimentResult r = run_experiment(experiment_from_yaml(YAML::Load(text), "exp.yaml"));
    REQUIRE_FALSE(r.oom);
    par_check_sums(r);
  }
}

TEST_CASE("FSDP with checkpointing: fsdp 1 is the plain checkpointing run, and resharding frees each unit's forward copy") {
  auto ckpt = [](const std::string& parallel) {
    const std::string text = "model: cifar-resnet20\nbatch: 8\nhw: h100-sxm\npool: pytorch-caching\nswap: checkpoint\n"
                             "concurrency: serial\niterations: 2\noptimizer: adamw\n" +
                             (parallel.empty() ? "" : "parallel: " + parallel + "\n");
    return experiment_from_yaml(YAML::Load(text), "exp.yaml");
  };
  const ExperimentResult plain = run_experiment(ckpt(""));
  REQUIRE_FALSE(plain.oom);
  const ExperimentResult one = run_experiment(ckpt("{fsdp: 1}"));
  CHECK(to_json(one, false) == to_json(plain, false));
  // On 4 ranks the replays read the regathered parameters (each swapped run passes the independent check inside
  // run_experiment): the forward's gathered copies are gone before the backward, so resharding needs less at the
  // peak than holding every unit gathered from its forward to its backward.
  const ExperimentResult reshard = run_experiment(ckpt("{fsdp: 4}"));
  const ExperimentResult held = run_experiment(ckpt("{fsdp: 4, reshard_after_forward: false}"));
  REQUIRE_FALSE(reshard.oom);
  REQUIRE_FALSE(held.oom);
  par_check_sums(reshard);
  par_check_sums(held);
  CHECK(reshard.peak_live_bytes < held.peak_live_bytes);
}

TEST_CASE("FSDP: a recomputed segment spanning several units is refused with the way out, not a lowering failure") {
  // sqrt's segments of round(sqrt(N)) blocks replay inner units before their backward all-gathers.
  auto sqrt_run = [](const std::string& parallel) {
    const std::string text = "model: cifar-resnet20\nbatch: 8\nhw: h100-sxm\npool: pytorch-caching\nswap: sqrt\n"
                             "concurrency: serial\niterations: 2\noptimizer: adamw\nparallel: " + parallel + "\n";
    return run_experiment(experiment_from_yaml(YAML::Load(text), "exp.yaml"));
  };
  try {
    (void)sqrt_run("{fsdp: 4}");
    FAIL("sqrt under fsdp ran");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "swap");
    CHECK(e.line() == 5);
    CHECK(std::string(e.what()).find("every: 1") != std::string::npos);
  }
  // One unit (wrap: root) has no inner unit to gather again.
  const ExperimentResult root = sqrt_run("{fsdp: 4, wrap: root}");
  CHECK_FALSE(root.oom);
  // checkmate weighs sqrt among its baselines: there it is listed as not runnable, and checkmate's own plan runs.
  const std::string text = "model: cifar-resnet20\nbatch: 8\nhw: h100-sxm\npool: pytorch-caching\nswap: checkmate\n"
                           "concurrency: serial\niterations: 2\noptimizer: adamw\nparallel: {fsdp: 4}\n";
  const ExperimentResult cm = run_experiment(experiment_from_yaml(YAML::Load(text), "exp.yaml"));
  REQUIRE_FALSE(cm.oom);
  bool sqrt_listed = false;
  const nlohmann::json report = to_json(cm, false).at("swap_report");
  for (const auto& b : report.at("baselines"))
    if (b.at("policy") == "sqrt") {
      sqrt_listed = true;
      CHECK(b.at("skipped").get<std::string>().find("regathered") != std::string::npos);
    }
  CHECK(sqrt_listed);
}

TEST_CASE("param-offload is FSDP's: under dp or zero it is an error naming swap") {
  for (const char* layout : {"{dp: 4}", "{zero: 2, dp: 4}"}) {
    CAPTURE(layout);
    const std::string text = std::string("model: cifar-resnet20\nbatch: 8\nhw: h100-sxm\npool: pytorch-caching\n") +
                             "swap: param-offload\nconcurrency: serial\niterations: 2\noptimizer: adamw\nparallel: " +
                             layout + "\n";
    try {
      (void)run_experiment(experiment_from_yaml(YAML::Load(text), "exp.yaml"));
      FAIL("param-offload ran");
    } catch (const ConfigError& e) {
      CHECK(e.key() == "swap");
      CHECK(e.line() == 5);
      CHECK(std::string(e.what()).find("fsdp") != std::string::npos);
    }
  }
}
