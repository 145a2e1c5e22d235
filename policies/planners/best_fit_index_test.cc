// Best fit through the lifetime index places every buffer where the scan it replaced did: the scan is kept here
// as the reference (every placed buffer, in (offset, index) order, filtered by lifetime), and both run on the
// shared DSA instances and on generated ones, in every visiting order. And the planners' time limit stops them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "common/param_binding.h"
#include "policies/planners/gap_placer.h"
#include "policies/planners/generated_instances.h"
#include "policies/planners/greedy_planners.h"
#include "policies/planners/instance_csv.h"
#include "policies/planners/lifetime_index.h"
#include "policies/planners/placement_checker.h"
#include "policies/planners/testing/shared_instances.h"

using namespace dlsim;

namespace {

std::vector<uint64_t> reference_best_fit(const std::vector<DsaBuffer>& buffers, const std::vector<size_t>& order) {
  std::vector<uint64_t> offsets(buffers.size(), 0);
  std::vector<std::pair<uint64_t, size_t>> placed;  // (offset, index), sorted
  std::vector<PlacedRange> occupied;
  for (size_t i : order) {
    const DsaBuffer& b = buffers[i];
    occupied.clear();
    for (const auto& [off, j] : placed)
      if (lifetimes_overlap(buffers[j], b)) occupied.push_back({off, off + buffers[j].size});
    offsets[i] = best_fit_offset(occupied, b.size);
    placed.insert(std::upper_bound(placed.begin(), placed.end(), std::make_pair(offsets[i], i)), {offsets[i], i});
  }
  return offsets;
}


void check_same(const std::vector<DsaBuffer>& b) {
  for (GreedyOrder o : {GreedyOrder::BySizeThenLower, GreedyOrder::Spatial, GreedyOrder::Temporal}) {
    const auto order = greedy_order(b, o);
    CHECK(place_best_fit_in_order(b, order) == reference_best_fit(b, order));
  }
}

}  // namespace

TEST_CASE("the lifetime index finds exactly the placed buffers whose lifetimes meet") {
  const auto b = guillotine_instance(400, 7);
  LifetimeIndex idx(b);
  std::vector<size_t> got;
  for (size_t placed = 0; placed < b.size(); placed += 37) {
    for (size_t i = placed; i < std::min(b.size(), placed + 37); ++i) idx.place(i);
    const size_t upto = std::min(b.size(), placed + 37);
    for (size_t q = 0; q < b.size(); q += 13) {
      got.clear();
      idx.conflicts(b[q], got);
      std::sort(got.begin(), got.end());
      std::vector<size_t> want;
      for (size_t j = 0; j < upto; ++j)
        if (lifetimes_overlap(b[j], b[q])) want.push_back(j);
      CHECK(got == want);
      CHECK(idx.count_conflicts(b[q]) == want.size());
    }
  }
}

namespace {
// Long instances of short lifetimes: few conflicts each, so the index serves most buffers.
std::vector<DsaBuffer> short_lived(size_t n, uint64_t seed) {
  std::vector<DsaBuffer> b;
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  auto next = [&](uint64_t m) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (x >> 33) % m;
  };
  for (size_t i = 0; i < n; ++i) {
    const auto lower = static_cast<int64_t>(next(static_cast<uint64_t>(n)));
    b.push_back({static_cast<int64_t>(i), lower, lower + 1 + static_cast<int64_t>(next(20)), 1 + next(1000)});
  }
  return b;
}
}  // namespace

TEST_CASE("best fit through the index places as the full scan did, on generated instances") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    check_same(guillotine_instance(50 + 37 * seed, seed));  // most buffers meet: the scan
    check_same(short_lived(500 + 200 * seed, seed));        // few meet: the index
  }
}

TEST_CASE("best fit through the index places as the full scan did, on the shared instances") {
  const auto files = dlsim::testing::shared_instance_files();
  if (files.empty()) {
    WARN("skipped: no instances under " << DLSIM_SHARED_DIR << "/data/dsa");
    return;
  }
  for (const auto& f : files) {
    INFO(f);
    const auto b = read_instance_csv(f);
    if (b.size() > 6000) continue;  // the reference scan is quadratic: the largest would take minutes in CI
    check_same(b);
  }
}

TEST_CASE("the one-pass planners stop at their time limit with a valid placement, and say so") {
  const auto b = guillotine_instance(20000, 3);
  for (const char* name : {"greedy-by-size", "best-fit"}) {
    INFO(name);
    const auto& entry = planner_registry().get(name);
    Params p(entry.params);
    CHECK(p.get_double("time_limit_s") == 60);
    p.set("time_limit_s", 1e-6);
    const PlanResult r = entry.factory(p)->plan(b);
    CHECK_FALSE(r.complete);
    CHECK_FALSE(check_placement(b, r.offsets));
    const PlanResult full = entry.factory(Params(entry.params))->plan(b);
    CHECK(full.complete);
    CHECK_FALSE(check_placement(b, full.offsets));
  }
}
