// experiment/first_step.h: which tensors PyTorch's first step makes, where, and when an experiment runs such a
// first iteration; and a whole run of one.
#include "experiment/first_step.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>

#include "common/config_error.h"
#include "common/testing/config_error_of.h"
#include "experiment/run_experiment.h"

using namespace dlsim;

namespace {

const std::string kFirstStepRun = "model: cifar-resnet20\nbatch: 8\nhw: h200\nswap: none\nconcurrency: serial\noptimizer: adamw\n";

Experiment first_step_parse(const std::string& text) { return experiment_from_yaml(YAML::Load(text), "exp.yaml"); }

// The ConfigError `text` raises (where it points); none when it parses.
std::optional<ConfigError> first_step_error(const std::string& text) {
  return testing::thrown_config_error([&] { first_step_parse(text); });
}

}  // namespace

TEST_CASE("first_step: lazy by default on pytorch-caching without a plan that copies (chosen or refused by name)") {
  CHECK(lazy_first_step(first_step_parse(kFirstStepRun + "pool: pytorch-caching\n"), nullptr));
  CHECK_FALSE(lazy_first_step(first_step_parse(kFirstStepRun + "pool: cnmem\n"), nullptr));
  CHECK_FALSE(lazy_first_step(first_step_parse(kFirstStepRun + "pool: pytorch-caching\nlaunch: cuda-graph\n"), nullptr));
  CHECK_FALSE(lazy_first_step(first_step_parse(kFirstStepRun + "pool: pytorch-caching\nfirst_step: preallocated\n"), nullptr));
  SwapPlan recompute, copies;
  recompute.recomputations.emplace_back();
  copies.actions.emplace_back();
  CHECK(lazy_first_step(first_step_parse(kFirstStepRun + "pool: pytorch-caching\n"), &recompute));
  CHECK_FALSE(lazy_first_step(first_step_parse(kFirstStepRun + "pool: pytorch-caching\n"), &copies));
  CHECK(lazy_first_step(first_step_parse(kFirstStepRun + "pool: pytorch-caching\nfirst_step: lazy\n"), &copies));
  const std::optional<ConfigError> pool = first_step_error(kFirstStepRun + "pool: cnmem\nfirst_step: lazy\n");
  REQUIRE(pool);
  CHECK(pool->key() == "first_step");
  CHECK(pool->line() == 8);
  CHECK_THAT(pool->message(), Catch::Contains("pytorch-caching"));
  const std::optional<ConfigError> word =
      first_step_error(kFirstStepRun + "pool: pytorch-caching\nfirst_step: sometimes\n");
  REQUIRE(word);
  CHECK(word->key() == "first_step");
  const std::optional<ConfigError> graph =
      first_step_error(kFirstStepRun + "pool: pytorch-caching\nlaunch: cuda-graph\nfirst_step: lazy\n");
  REQUIRE(graph);
  CHECK(graph->key() == "first_step");
}

TEST_CASE("first_step: the optimizer's state in one group before its first op's allocations, cuBLAS's per thread") {
  const PreparedExperiment p = prepare_experiment(first_step_parse(kFirstStepRun + "pool: pytorch-caching\n"));
  const std::vector<FirstUse> uses = pytorch_first_uses(p.graph, p.cublas);
  REQUIRE(uses.size() == 1 + p.cublas.per_thread.size());
  const FirstUse& state = uses.front();
  CHECK(state.before_op_allocations);
  std::vector<TensorId> expected;
  for (const Tensor& t : p.graph.tensors())
    if (t.kind == TensorKind::OptimizerState) expected.push_back(t.id);
  CHECK(state.tensors == expected);  // Adam: two per parameter, in tensor order (exp_avg, exp_avg_sq)
  CHECK(expected.size() % 2 == 0);
  for (OpId o : state.ops) CHECK(p.graph.op(o).phase == Phase::Optimizer);
  REQUIRE(p.cublas.per_thread.size() == 2);  // the classifier's matrix product forward (Python) and backward (autograd)
  for (size_t i = 0; i < p.cublas.per_thread.size(); ++i) {
    CHECK(uses[i + 1].tensors == p.cublas.per_thread[i].workspaces);
    CHECK_FALSE(uses[i + 1].before_op_allocations);
  }
}

TEST_CASE("first_step: a lazy run's first step holds no optimizer state before its step and the steady ones are unchanged") {
  const Experiment lazy = first_step_parse(kFirstStepRun + "pool: pytorch-caching\niterations: 2\n");
  const Experiment pre = first_step_parse(kFirstStepRun + "pool: pytorch-caching\niterations: 2\nfirst_step: preallocated\n");
  const ExperimentResult l = run_experiment(lazy), p = run_experiment(pre);
  CHECK(l.first_step == "lazy");
  CHECK(p.first_step == "preallocated");
  // The first step runs before the two iterations asked for, and is not counted among them.
  CHECK(l.iterations_run == 2);
  CHECK(p.iterations_run == 2);
  CHECK_FALSE(p.first_step_peak_live_bytes.has_value());
  REQUIRE(l.first_step_peak_live_bytes.has_value());
  const PreparedExperiment prep = prepare_experiment(lazy);
  uint64_t state = 0;
  for (const Tensor& t : prep.graph.tensors())
    if (t.kind == TensorKind::OptimizerState) state += t.bytes;
  REQUIRE(state > 0);
  // A CNN's live peak is at the end of its forward pass: in the first step, without the state, it is lower by the
  // state's bytes; after it, the steady iterations' live peak is the preallocated run's.
  CHECK(*l.first_step_peak_live_bytes == p.peak_live_bytes - state);
  CHECK(l.peak_live_bytes == p.peak_live_bytes);
  CHECK(*l.first_step_peak_reserved_bytes <= l.peak_reserved_bytes);
  CHECK(l.iteration_time_us == Approx(p.iteration_time_us).epsilon(0.02));
  CHECK_FALSE(run_experiment(first_step_parse(kFirstStepRun + "pool: cnmem\n")).first_step.has_value());
}
