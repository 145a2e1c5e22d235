// Planner time against the number of buffers (generated perfect packings), the optimal planner's time to
// prove MiniMalloc's H and I at LOAD (`OptimalAtLoad/<instance>`: real time per plan, with the nodes and whether
// it was proved as counters; target under 10 s each on the project's 2-core VM), and a table mode:
// `PlannerTable/<planner>/<instance>` runs each planner once on each shared instance and reports LOAD, height,
// ratio and whether optimality was proved as counters (scripts/planner_table.sh turns them into
// results/planners/README.md). The optimal planner gets 60 s on minimalloc/ and 10 s elsewhere, as in the
// project's targets; override with DLSIM_TABLE_MINIMALLOC_S / DLSIM_TABLE_OTHER_S. The instances are read from
// $DLSIM_SHARED_DIR/data/dsa (default ../shared relative to the working directory).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "policies/planners/generated_instances.h"
#include "policies/planners/greedy_planners.h"
#include "policies/planners/instance_csv.h"
#include "policies/planners/load.h"
#include "policies/planners/optimal_planner.h"

#ifndef DLSIM_SHARED_DIR
#define DLSIM_SHARED_DIR "../shared"
#endif

using namespace dlsim;

static void BM_Load(benchmark::State& st) {
  const auto b = guillotine_instance(static_cast<size_t>(st.range(0)), 7);
  for (auto _ : st) benchmark::DoNotOptimize(compute_load(b));
  st.SetComplexityN(st.range(0));
}
BENCHMARK(BM_Load)->RangeMultiplier(4)->Range(256, 16384)->Complexity();

static void BM_GreedyBySize(benchmark::State& st) {
  const auto b = guillotine_instance(static_cast<size_t>(st.range(0)), 7);
  for (auto _ : st) benchmark::DoNotOptimize(plan_greedy_by_size(b).height);
  st.SetComplexityN(st.range(0));
}
BENCHMARK(BM_GreedyBySize)->RangeMultiplier(4)->Range(256, 16384)->Complexity()->Unit(benchmark::kMillisecond);

static void BM_BestFitBoth(benchmark::State& st) {
  const auto b = guillotine_instance(static_cast<size_t>(st.range(0)), 7);
  for (auto _ : st) benchmark::DoNotOptimize(plan_best_fit(b, "both").height);
  st.SetComplexityN(st.range(0));
}
BENCHMARK(BM_BestFitBoth)->RangeMultiplier(4)->Range(256, 16384)->Complexity()->Unit(benchmark::kMillisecond);

// The exact search with a fixed node budget: time per node as the instance grows.
static void BM_OptimalTwentyThousandNodes(benchmark::State& st) {
  const auto b = guillotine_instance(static_cast<size_t>(st.range(0)), 7);
  OptimalOptions o;
  o.time_limit_s = 3600;
  o.node_limit = 20000;
  for (auto _ : st) benchmark::DoNotOptimize(plan_optimal(b, o).height);
  st.SetComplexityN(st.range(0));
}
BENCHMARK(BM_OptimalTwentyThousandNodes)->RangeMultiplier(2)->Range(64, 1024)->Unit(benchmark::kMillisecond);

namespace {

double env_seconds(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v ? std::atof(v) : fallback;
}

void table_row(benchmark::State& st, const std::string& file, const std::string& planner) {
  const auto b = read_instance_csv(file);
  const bool minimalloc = file.find("/minimalloc/") != std::string::npos;
  PlanResult r;
  for (auto _ : st) {
    const auto t0 = std::chrono::steady_clock::now();
    if (planner == "greedy-by-size") r = plan_greedy_by_size(b);
    else if (planner == "best-fit") r = plan_best_fit(b, "both");
    else {
      OptimalOptions o;
      o.time_limit_s = minimalloc ? env_seconds("DLSIM_TABLE_MINIMALLOC_S", 60) : env_seconds("DLSIM_TABLE_OTHER_S", 10);
      r = plan_optimal(b, o);
    }
    st.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const uint64_t load = compute_load(b);
  st.counters["buffers"] = static_cast<double>(b.size());
  st.counters["load"] = static_cast<double>(load);
  st.counters["height"] = static_cast<double>(r.height);
  st.counters["lower_bound"] = static_cast<double>(r.lower_bound);
  st.counters["ratio"] = static_cast<double>(r.height) / static_cast<double>(load);
  st.counters["proved"] = r.optimal ? 1 : 0;
  st.counters["nodes"] = static_cast<double>(r.nodes);
}

std::filesystem::path shared_dsa_dir() {
  const char* shared = std::getenv("DLSIM_SHARED_DIR");
  return std::filesystem::path(shared ? shared : DLSIM_SHARED_DIR) / "data" / "dsa";
}

// The whole planner (heuristics, then the exact search) with its defaults and a 60 s limit, on the minimalloc
// instances whose proof at LOAD is the search's hardest work among those it proves.
void optimal_at_load(benchmark::State& st, const std::string& file) {
  const auto b = read_instance_csv(file);
  OptimalOptions o;
  o.time_limit_s = 60;
  PlanResult r;
  for (auto _ : st) r = plan_optimal(b, o);
  st.counters["nodes"] = static_cast<double>(r.nodes);
  st.counters["proved_at_load"] = r.optimal && r.height == compute_load(b) ? 1 : 0;
}

const int kRegisterOptimalAtLoad = [] {
  for (const std::string name : {"H", "I"}) {
    const auto file = shared_dsa_dir() / "minimalloc" / (name + ".1048576.csv");
    if (!std::filesystem::exists(file)) continue;
    benchmark::RegisterBenchmark(("OptimalAtLoad/minimalloc/" + name).c_str(),
                                 [file](benchmark::State& st) { optimal_at_load(st, file.string()); })
        ->Iterations(3)
        ->UseRealTime()
        ->Unit(benchmark::kSecond);
  }
  return 0;
}();

const int kRegisterTable = [] {
  const std::filesystem::path dir = shared_dsa_dir();
  if (!std::filesystem::exists(dir)) return 0;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.path().extension() == ".csv") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string rel = std::filesystem::relative(f, dir).string();
    for (const std::string planner : {"greedy-by-size", "best-fit", "optimal"})
      benchmark::RegisterBenchmark(("PlannerTable/" + planner + "/" + rel).c_str(),
                                   [f, planner](benchmark::State& st) { table_row(st, f, planner); })
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
  }
  return 0;
}();

}  // namespace
