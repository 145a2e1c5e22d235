#pragma once
// The one-pass greedy offset planners. Both visit buffers in a fixed global order and put each one in the
// smallest address gap left by the already placed buffers whose lifetimes intersect it (best fit), else on
// top of them; they differ only in the order.
//
// greedy-by-size (Pisarchyk & Lee 2020, TFLite GPU "greedy by size" offset calculation): size descending,
//   ties by lower ascending, then by position in the input file (the tie-breaking of the reference table
//   allocators-and-swap.md A4.7, which this reproduces exactly).
// best-fit (XLA GlobalDecreasingSizeBestFitHeap, as described in our notes): `spatial` order = size
//   descending, then live-range length descending, then input position; `temporal` order = live-range length
//   descending, then size descending, then input position; `both` (the default, like XLA's wrapper that keeps
//   the better of its spatial and temporal heaps) runs the two and keeps the lower height (spatial on a tie).
#include <chrono>
#include <vector>

#include "policies/planners/planner.h"

namespace dlsim {

enum class GreedyOrder { BySizeThenLower, Spatial, Temporal };

// The visiting order (indices into `buffers`) for one of the orders above.
std::vector<size_t> greedy_order(const std::vector<DsaBuffer>& buffers, GreedyOrder order);

// Places buffers in the given order by best fit among conflicting placed buffers: O(sum over buffers of
// (k + 1) log n + k log k), k its conflicting placed buffers (lifetime_index.h), not O(n^2).
std::vector<uint64_t> place_best_fit_in_order(const std::vector<DsaBuffer>& buffers,
                                              const std::vector<size_t>& order);
// The same under a deadline (checked every 64 buffers): once it passes, the buffers not yet placed are stacked
// on top of everything placed so far (valid, but high), so that a caller with a hard time limit always gets a
// placement. *finished (if given) tells whether every buffer was placed by best fit.
std::vector<uint64_t> place_best_fit_in_order(const std::vector<DsaBuffer>& buffers, const std::vector<size_t>& order,
                                              std::chrono::steady_clock::time_point deadline, bool* finished);

// time_limit_s: the wall-clock budget of the whole plan (the planners' `time_limit_s`, 60 s by default; the
// default here, 1e9, is none): past it the rest is stacked on top and the result says complete = false.
PlanResult plan_greedy_by_size(const std::vector<DsaBuffer>& buffers, double time_limit_s = 1e9);
// order: "spatial", "temporal" or "both".
PlanResult plan_best_fit(const std::vector<DsaBuffer>& buffers, const std::string& order = "both",
                         double time_limit_s = 1e9);

void register_greedy_planners(PlannerRegistry& r);

}  // namespace dlsim
