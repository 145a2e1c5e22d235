// How fast `dlsim calibrate --published` can evaluate its objective: every step of the fit re-predicts each
// point from its reduced graph (validate/calibrate/published_regression.h), so prediction speed bounds the fit's time.
#include <benchmark/benchmark.h>

#include "hw/gpu_spec_file.h"
#include "validate/calibrate/published_regression.h"
#include "workloads/zoo.h"

namespace {

using namespace dlsim;

PointModel bert_large() {
  ModelOptions o;
  o.batch = 32;
  o.training.precision = Precision::MixedFP16;
  o.training.optimizer = Optimizer::Adam;
  const GpuSpec spec = load_gpu_spec(resolve_hw_path("a100-sxm-80gb"));
  return point_model(build_training_graph("bert-large-squad", o), RooflineCostModel(spec, RooflineOptions{}));
}

void BM_PredictBertLarge(benchmark::State& state) {
  const PointModel m = bert_large();
  const ClassEfficiencies e;
  const RegressionSetup s;
  for (auto _ : state) benchmark::DoNotOptimize(predict_ns(m, e, s));
  state.counters["distinct_ops"] = static_cast<double>(m.ops.size());
}
BENCHMARK(BM_PredictBertLarge);

void BM_ReduceBertLarge(benchmark::State& state) {
  ModelOptions o;
  o.batch = 32;
  const Graph g = build_training_graph("bert-large-squad", o);
  const GpuSpec spec = load_gpu_spec(resolve_hw_path("a100-sxm-80gb"));
  const RooflineCostModel r(spec, RooflineOptions{});
  for (auto _ : state) benchmark::DoNotOptimize(point_model(g, r));
  state.counters["ops"] = static_cast<double>(g.ops().size());
}
BENCHMARK(BM_ReduceBertLarge);

}  // namespace
