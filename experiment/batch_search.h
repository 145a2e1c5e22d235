#pragma once
// What fits: the largest batch an experiment runs at without a simulated out-of-memory on its GPU, under its
// own pool, swap and concurrency policies; and, for a swap policy that aims at a memory limit, the least
// memory it reaches within given overheads.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

#include "experiment/experiment.h"
#include "experiment/run_experiment.h"
#include "experiment/sweep/sweep.h"

namespace dlsim {

struct FitResult {
  int64_t max_batch = 0;  // 0: not even batch 1 fits
  ExperimentResult at_max;
  std::vector<std::pair<int64_t, bool>> probes;  // (batch, fitted) in the order tried
};

// Doubles from the experiment's batch until a run runs out of memory (or halves down when it already does),
// then bisects; a batch fits when its run completes every iteration without running out of memory.
FitResult find_max_batch(const Experiment& e, const RunFn& run, int64_t batch_cap = 1 << 16);

struct MemoryAtOverhead {
  double max_overhead = 0;   // the bound (a fraction)
  bool found = false;
  double limit_fraction = 0; // the swap policy's limit that reached it
  uint64_t peak_live_bytes = 0, peak_reserved_bytes = 0;
  double overhead = 0;
};

// Tries limit_fraction = 1.00, 0.95, ..., 0.05 at the experiment's batch (stopping where the limit is out of
// reach) and keeps, for each bound, the run with the least peak of live bytes whose overhead is within it.
// Throws ConfigError when the swap policy takes no limit_fraction.
std::vector<MemoryAtOverhead> memory_at_overhead(const Experiment& e, const std::vector<double>& bounds,
                                                 const RunFn& run);

nlohmann::json to_json(const FitResult& f, const std::vector<MemoryAtOverhead>& m);

}  // namespace dlsim
