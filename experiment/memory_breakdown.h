#pragma once
// What the device memory holds at the run's peaks, by category (parallel/memory_category.h): issue 32 item 4 and
// issue 29 item 5. Read off the trace's allocation records in the order the simulator made them, so that the
// live bytes it sums are the simulator's own (their maximum is ExperimentResult::peak_live_bytes).
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <vector>

#include "parallel/memory_category.h"
#include "program/trace.h"
#include "workloads/graph.h"

namespace dlsim {

struct MemorySnapshot {
  std::array<uint64_t, parallel::kMemoryCategories.size()> bytes{};  // live bytes per category
  uint64_t allocated = 0;  // their sum
  uint64_t reserved = 0;   // what the pool held from the device at that moment
  int iteration = 0;       // -1: setup
  TimeNs time = 0;
};

struct MemoryBreakdown {
  MemorySnapshot at_peak_live;      // the first moment live bytes reach their maximum
  MemorySnapshot at_peak_reserved;  // the first moment the pool's reservation reaches its maximum
  // The first moment the model states (weights + gradients + optimizer state) reach their maximum: what the ZeRO
  // paper's Table 1 and DeepSpeed's estimators count per GPU, measured (with the gradients a layout holds before
  // they are reduced, which those formulas leave out).
  MemorySnapshot at_peak_model_states;
};

// Over every allocation and free of the trace; categories per tensor (parallel::category_of's fallback for the
// tensors it lacks).
MemoryBreakdown memory_breakdown(const Trace& trace, const Graph& g, const std::vector<parallel::MemoryCategory>& categories);
// {"at_peak_live": {<category>: bytes, ..., "allocated", "reserved", "allocator_overhead" (reserved - allocated),
//  "iteration"}, "at_peak_reserved": {...}, "at_peak_model_states": {...}}
nlohmann::json to_json(const MemoryBreakdown& b);

}  // namespace dlsim
