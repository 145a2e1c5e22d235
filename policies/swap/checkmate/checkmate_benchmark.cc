// Checkmate's planner in parts: building the rematerialisation problem and writing its MILP (what dlsim does;
// CBC's solve is a separate process, timed by the scenario and results/memory-saving.md instead). The MILP grows
// with the square of the ops: ResNet-152 (about 1,700 training ops) and GPT-2 small (about 850) are solved on a
// coarse graph instead (experiment/checkmate_coarse_benchmark.cc times that whole plan), so the op-level problem
// build is timed on them and the op-level MILP on VGG-16, ResNet-18 and ResNet-50.
#include <benchmark/benchmark.h>

#include "policies/swap/checkmate/checkmate_milp.h"
#include "policies/swap/checkmate/remat_problem.h"
#include "workloads/zoo.h"

namespace {

using namespace dlsim;

const char* kModels[] = {"vgg16", "resnet18", "resnet50", "resnet152", "gpt2-small"};

struct Prepared {
  Graph g;
  std::vector<OpId> order;
};

Prepared prepare(const char* model) {
  ModelOptions o;
  o.batch = 8;
  Prepared p{build_training_graph(model, o), {}};
  for (const Op& op : p.g.ops()) p.order.push_back(op.id);
  return p;
}

void BM_RematProblem(benchmark::State& state) {
  const Prepared p = prepare(kModels[state.range(0)]);
  const std::vector<double> ns(p.order.size(), 1000.0);
  for (auto _ : state) benchmark::DoNotOptimize(RematProblem::build(p.g, p.order, ns));
  state.counters["ops"] = static_cast<double>(p.order.size());
  state.SetLabel(kModels[state.range(0)]);
}
BENCHMARK(BM_RematProblem)->DenseRange(0, 4)->Unit(benchmark::kMillisecond);

void BM_CheckmateModel(benchmark::State& state) {
  const Prepared p = prepare(kModels[state.range(0)]);
  const RematProblem prob = RematProblem::build(p.g, p.order, std::vector<double>(p.order.size(), 1000.0));
  uint64_t budget = 0;
  for (uint64_t b : prob.base_bytes) budget = std::max(budget, b);
  CheckmateModel m;
  for (auto _ : state) {
    m = checkmate_model(prob, budget * 2);
    benchmark::DoNotOptimize(m.lp.data());
  }
  state.counters["binaries"] = m.binaries;
  state.counters["constraints"] = m.constraints;
  state.counters["MB"] = static_cast<double>(m.lp.size()) / 1e6;
  state.SetLabel(kModels[state.range(0)]);
}
BENCHMARK(BM_CheckmateModel)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace
