#include <catch2/catch.hpp>

#include <chrono>

#include "policies/planners/generated_instances.h"
#include "policies/planners/greedy_planners.h"
#include "policies/planners/load.h"
#include "policies/planners/peak_orders.h"
#include "policies/planners/placement_checker.h"

using namespace dlsim;

TEST_CASE("buffer peaks are the largest live total during each lifetime, LOAD is their maximum") {
  // Live totals: [0,2) 5, [2,4) 5+3 = 8, [4,6) 3.
  const std::vector<DsaBuffer> b{{0, 0, 4, 5}, {1, 2, 6, 3}, {2, 5, 6, 1}};
  CHECK(buffer_peaks(b) == std::vector<uint64_t>{8, 8, 4});
  const auto g = guillotine_instance(50, 2);
  const auto peaks = buffer_peaks(g);
  CHECK(*std::max_element(peaks.begin(), peaks.end()) == compute_load(g));
}

TEST_CASE("peak orders put the busiest buffers first with the stated tie-breaks") {
  const std::vector<DsaBuffer> b{{0, 0, 1, 2}, {1, 0, 4, 1}, {2, 2, 4, 3}, {3, 5, 6, 9}};
  const auto peaks = buffer_peaks(b);  // 3, 4, 4, 9
  CHECK(peak_order(b, peaks, PeakOrder::PeakThenSize) == std::vector<size_t>{3, 2, 1, 0});
  CHECK(peak_order(b, peaks, PeakOrder::PeakThenWidth) == std::vector<size_t>{3, 1, 2, 0});
}

TEST_CASE("promote_above moves the buffers sticking out above a level to the front, keeping relative order") {
  const std::vector<DsaBuffer> b{{0, 0, 2, 4}, {1, 0, 2, 4}, {2, 0, 2, 4}, {3, 3, 4, 1}};
  const std::vector<uint64_t> offsets{0, 8, 4, 0};
  CHECK(promote_above(b, {3, 1, 0, 2}, offsets, 8) == std::vector<size_t>{1, 3, 0, 2});
  CHECK(promote_above(b, {3, 1, 0, 2}, offsets, 12) == std::vector<size_t>{3, 1, 0, 2});
}

TEST_CASE("best fit under a passed deadline still returns a valid placement, stacking what it did not place") {
  const auto b = guillotine_instance(300, 5);
  const auto order = greedy_order(b, GreedyOrder::BySizeThenLower);
  bool finished = true;
  const auto offs = place_best_fit_in_order(b, order, std::chrono::steady_clock::now(), &finished);
  CHECK_FALSE(finished);
  CHECK_FALSE(check_placement(b, offs));
  bool all = false;
  const auto full = place_best_fit_in_order(b, order, std::chrono::steady_clock::time_point::max(), &all);
  CHECK(all);
  CHECK(full == place_best_fit_in_order(b, order));
}
