// Checkmate's plans, with copies and without, on random training-shaped graphs: lowered, simulated on the fakes
// (sim/testing/fake_run.h) and passed through the independent checker (sim/check/swap_plan_checker.h): no tensor used
// while it is on the host or dropped, every re-run reads what its first run read, every free after the copies
// that read the memory; and the simulated peak is the one the planner counted (policies/swap/checkmate/checkmate_swap_test.cc
// checks that count against the budget). 80 graphs passed once; CI runs 10.
#include <catch2/catch.hpp>

#include <set>

#include "sim/check/swap_plan_checker.h"
#include "policies/swap/checkmate/checkmate_swap.h"
#include "policies/swap/core/program_load.h"
#include "policies/swap/testing/random_remat_graph.h"
#include "program/lower.h"
#include "sim/testing/fake_run.h"
#include "policies/concurrency/concurrency_policy.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {
// The profile of `rg`'s ops run back to back in `s`'s order, each for its op_ns.
IterationProfile serial_profile_of(const RandomRematGraph& rg, const Schedule& s) {
  IterationProfile prof;
  prof.order = s.order;
  TimeNs t = 0;
  for (TimeNs d : rg.op_ns) {
    prof.op_start.push_back(t);
    prof.op_end.push_back(t += d);
  }
  prof.iteration_ns = t;
  prof.peak_live_bytes = ProgramLoad(rg.g, s.order).peak();
  return prof;
}
}  // namespace

TEST_CASE("checkmate's plans on random graphs, with copies and without, pass the independent checker") {
  int checked = 0, with_copies = 0, with_reruns = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const RandomRematGraph rg(seed);
    const Graph& g = rg.g;
    const Schedule s = serial_schedule_of(g);
    const IterationProfile prof = serial_profile_of(rg, s);
    TestLink link;
    const SwapContext ctx{g, s, prof, link, uint64_t{1} << 40, nullptr};
    for (double f : {0.8, 0.6, 0.45}) {
      for (bool swap : {false, true}) {
        CheckmateOptions o;
        o.limit.fraction = f;
        o.time_limit_s = 20;
        o.swap = swap;
        const SwapResult r = CheckmateSwap(o).plan(ctx);
        if (r.plan.empty()) continue;
        INFO("seed " << seed << " fraction " << f << " swap " << swap);
        const Program p = lower(g, s, r.plan);
        std::set<TensorId> hosted;
        for (const Command& c : p.iteration)
          if (c.kind == CmdKind::CopyOut || c.kind == CmdKind::CopyIn) hosted.insert(c.tensor);
        uint64_t pinned = 0;
        for (TensorId h : hosted) pinned += g.tensor(h).bytes;
        const RunResult run = run_on_fakes(g, p, 2);
        const SwapCheck check = check_swapped_run(g, p, run.trace, pinned);
        CHECK(run.peak_live_bytes == ProgramLoad(g, s.order).peak_with(r.plan, s.stream_of));  // the promise is kept
        for (const std::string& problem : check.problems) UNSCOPED_INFO(problem);
        CHECK(check.ok());
        ++checked;
        if (!r.plan.actions.empty()) ++with_copies;
        if (!r.plan.recomputations.empty()) ++with_reruns;
      }
    }
  }
  CHECK(checked > 20);
  CHECK(with_copies > 3);
  CHECK(with_reruns > 10);
}

// The coarse path (remat_coarsening.h, checkmate_coarse.h): plans solved on graphs of a few segments and lowered to the
// ops are Programs the lowering accepts, that run on the fakes at the peak the planner counted, and that pass the
// independent checker (each replay re-runs whole segments, in order, reading what their first run read).
TEST_CASE("checkmate's plans lowered from a coarse graph pass the independent checker") {
  int checked = 0, with_reruns = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const RandomRematGraph rg(seed);
    const Graph& g = rg.g;
    const Schedule s = serial_schedule_of(g);
    const IterationProfile prof = serial_profile_of(rg, s);
    TestLink link;
    const SwapContext ctx{g, s, prof, link, uint64_t{1} << 40, nullptr};
    for (double f : {0.8, 0.6}) {
      for (int nodes : {4, 7}) {
        CheckmateOptions o;
        o.limit.fraction = f;
        o.time_limit_s = 20;
        o.coarsen = CheckmateCoarsen::Always;
        o.coarse_nodes = nodes;
        o.compare_baselines = false;
        const SwapResult r = CheckmateSwap(o).plan(ctx);
        if (r.plan.empty()) continue;
        INFO("seed " << seed << " fraction " << f << " nodes " << nodes);
        const Program p = lower(g, s, r.plan);
        const RunResult run = run_on_fakes(g, p, 2);
        const SwapCheck check = check_swapped_run(g, p, run.trace, 0);
        CHECK(run.peak_live_bytes == ProgramLoad(g, s.order).peak_with(r.plan, s.stream_of));
        CHECK(run.peak_live_bytes == r.report["planned_peak_bytes"].get<uint64_t>());
        for (const std::string& problem : check.problems) UNSCOPED_INFO(problem);
        CHECK(check.ok());
        ++checked;
        if (!r.plan.recomputations.empty()) ++with_reruns;
      }
    }
  }
  CHECK(checked > 10);
  CHECK(with_reruns > 10);
}
