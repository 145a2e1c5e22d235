// The coarsening behind checkmate at real sizes (remat_coarsening.h): the chunks are a valid contraction of the
// training DAG, the coarse graph stands for every tensor once, the lowering of a coarse plan is a plan the load
// counts within the budget, and with one op per chunk the coarse MILP is the op-level one.
#include "policies/swap/checkmate/remat_coarsening.h"

#include <catch2/catch.hpp>

#include <set>

#include "policies/swap/checkmate/checkmate_swap.h"
#include "policies/swap/core/program_load.h"
#include "policies/swap/testing/back_to_back_profile.h"
#include "policies/swap/testing/random_remat_graph.h"
#include "policies/swap/testing/swap_graphs.h"
#include "policies/concurrency/concurrency_policy.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

std::vector<double> as_double(const std::vector<TimeNs>& ns) { return {ns.begin(), ns.end()}; }

SwapResult plan_checkmate(const Graph& g, const std::vector<TimeNs>& ns, uint64_t budget, CheckmateCoarsen coarsen,
                          int coarse_nodes) {
  const Schedule s = serial_schedule_of(g);
  const IterationProfile prof = profile_of(g, s, ns);
  TestLink link;
  const SwapContext ctx{g, s, prof, link, uint64_t{1} << 40, nullptr};
  CheckmateOptions o;
  o.limit.bytes = budget;
  o.coarsen = coarsen;
  o.coarse_nodes = coarse_nodes;
  o.compare_baselines = false;
  o.time_limit_s = 20;
  return CheckmateSwap(o).plan(ctx);
}

}  // namespace

TEST_CASE("remat_chunks: contiguous chunks, at most the nodes asked for, never cutting an in-place chain") {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const RandomRematGraph rg(seed);
    const Schedule s = serial_schedule_of(rg.g);
    const int n = static_cast<int>(s.order.size());
    for (int max_chunks : {2, 3, 5, 8, n, n + 3}) {
      INFO("seed " << seed << " max_chunks " << max_chunks);
      const std::vector<int> begin = remat_chunks(rg.g, s.order, max_chunks);
      REQUIRE(begin.size() >= 2);
      CHECK(begin.front() == 0);
      CHECK(begin.back() == n);
      for (size_t c = 1; c < begin.size(); ++c) CHECK(begin[c] > begin[c - 1]);
      CHECK(static_cast<int>(begin.size()) - 1 <= max_chunks);
      if (max_chunks >= n) CHECK(static_cast<int>(begin.size()) - 1 == n);  // one op per chunk
      // An in-place update (R_i rewrites F_i's output) stays in its maker's chunk.
      std::vector<int> chunk_of(static_cast<size_t>(n));
      for (size_t c = 0; c + 1 < begin.size(); ++c)
        for (int p = begin[c]; p < begin[c + 1]; ++p) chunk_of[static_cast<size_t>(p)] = static_cast<int>(c);
      for (int p = 1; p < n; ++p) {
        const Op& o = rg.g.op(s.order[static_cast<size_t>(p)]);
        if (o.name[0] == 'R' && max_chunks < n) CHECK(chunk_of[static_cast<size_t>(p)] == chunk_of[static_cast<size_t>(p) - 1]);
      }
    }
  }
}

TEST_CASE("coarsen_remat: a valid DAG contraction, each fine tensor in one coarse tensor at most, the bytes kept") {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const RandomRematGraph rg(seed);
    const Schedule s = serial_schedule_of(rg.g);
    for (int max_chunks : {3, 6}) {
      INFO("seed " << seed << " max_chunks " << max_chunks);
      const std::vector<int> begin = remat_chunks(rg.g, s.order, max_chunks);
      const RematCoarsening c = coarsen_remat(rg.g, s.order, as_double(rg.op_ns), begin);
      REQUIRE(c.chunks() == static_cast<int>(begin.size()) - 1);
      REQUIRE(static_cast<int>(c.graph.ops().size()) == c.chunks());
      // Every data edge of the fine graph (u writes t, a later v reads it) between two chunks goes forward and is an
      // edge of the coarse graph (t's coarse tensor an output of u's chunk and an input of v's): a contraction of the
      // DAG, with no cycle as the chunks are contiguous in a topological order.
      std::vector<TensorId> coarse_of(rg.g.tensors().size(), kNoTensor);
      for (size_t i = 0; i < c.members.size(); ++i)
        for (TensorId t : c.members[i]) coarse_of[static_cast<size_t>(t)] = static_cast<TensorId>(i);
      std::vector<int> chunk_of(s.order.size());
      for (int k = 0; k < c.chunks(); ++k)
        for (int p = begin[static_cast<size_t>(k)]; p < begin[static_cast<size_t>(k) + 1]; ++p)
          chunk_of[static_cast<size_t>(p)] = k;
      int edges = 0;
      for (size_t pu = 0; pu < s.order.size(); ++pu)
        for (TensorId t : rg.g.op(s.order[pu]).outputs)
          for (size_t pv = pu + 1; pv < s.order.size(); ++pv) {
            const Op& v = rg.g.op(s.order[pv]);
            if (!std::count(v.inputs.begin(), v.inputs.end(), t) || chunk_of[pu] == chunk_of[pv]) continue;
            CHECK(chunk_of[pu] < chunk_of[pv]);
            const TensorId ct = coarse_of[static_cast<size_t>(t)];
            REQUIRE(ct != kNoTensor);
            const Op& cu = c.graph.op(chunk_of[pu]);
            const Op& cv = c.graph.op(chunk_of[pv]);
            CHECK(std::count(cu.outputs.begin(), cu.outputs.end(), ct) == 1);
            CHECK(std::count(cv.inputs.begin(), cv.inputs.end(), ct) == 1);
            ++edges;
          }
      CHECK(edges > 0);
      std::set<TensorId> seen;
      for (const auto& m : c.members)
        for (TensorId t : m) CHECK(seen.insert(t).second);
      for (size_t i = 0; i < c.members.size(); ++i) {
        uint64_t bytes = 0;
        for (TensorId t : c.members[i]) bytes += rg.g.tensor(t).bytes;
        if (!c.members[i].empty()) CHECK(c.graph.tensor(static_cast<TensorId>(i)).bytes == bytes);
      }
      double ns = 0, coarse_ns = 0;
      for (TimeNs t : rg.op_ns) ns += static_cast<double>(t);
      for (double t : c.op_ns) coarse_ns += t;
      CHECK(coarse_ns == Approx(ns));
      // A forward chunk is a coarse forward op; the loss and backward ops are not.
      for (int k = 0; k < c.chunks(); ++k) {
        bool all_forward = true;
        for (int p = begin[static_cast<size_t>(k)]; p < begin[static_cast<size_t>(k) + 1]; ++p)
          all_forward = all_forward && rg.g.op(s.order[static_cast<size_t>(p)]).phase == Phase::Forward;
        CHECK((c.graph.op(k).phase == Phase::Forward) == all_forward);
      }
    }
  }
}

TEST_CASE("checkmate on a coarse graph: the lowered plan is within the budget by the op-level count, or says so") {
  int solved = 0, with_reruns = 0;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    const RandomRematGraph rg(seed);
    const Schedule s = serial_schedule_of(rg.g);
    const ProgramLoad load(rg.g, s.order);
    for (double f : {0.8, 0.6}) {
      const auto budget = static_cast<uint64_t>(static_cast<double>(load.peak()) * f);
      INFO("seed " << seed << " budget " << budget);
      const SwapResult r = plan_checkmate(rg.g, rg.op_ns, budget, CheckmateCoarsen::Always, 6);
      REQUIRE(r.report.contains("coarse"));
      CHECK(r.report["coarse"]["chunks"].get<int>() <= 6);
      if (!r.report.contains("planned_peak_bytes")) continue;  // infeasible on the coarse graph
      ++solved;
      if (!r.plan.recomputations.empty()) ++with_reruns;
      const uint64_t peak = load.peak_with(r.plan, s.stream_of);
      CHECK(peak == r.report["planned_peak_bytes"].get<uint64_t>());
      bool fits = false;
      for (const auto& a : r.report["attempts"]) fits = fits || a.value("fits", false);
      CHECK(fits == (peak <= budget));
      // Every re-run op of a lowered recomputation ran before it, and whole chunks re-run in order.
      for (const Recomputation& rc : r.plan.recomputations)
        for (OpId o : rc.ops) CHECK(std::find(s.order.begin(), s.order.end(), o) - s.order.begin() < rc.before);
    }
  }
  CHECK(solved > 10);
  CHECK(with_reruns > 3);
}

TEST_CASE("checkmate with one op per chunk: the coarse MILP is the op-level one, with the same optimum") {
  // Each op of the random graphs makes one tensor, so no two values share a signature: the coarse graph of singleton
  // chunks has the op-level problem's stages, values and memory, and CBC proves the same least re-run time.
  int compared = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const RandomRematGraph rg(seed);
    const Schedule s = serial_schedule_of(rg.g);
    const ProgramLoad load(rg.g, s.order);
    const int n = static_cast<int>(s.order.size());
    for (double f : {0.8, 0.6}) {
      const auto budget = static_cast<uint64_t>(static_cast<double>(load.peak()) * f);
      INFO("seed " << seed << " budget " << budget);
      const SwapResult exact = plan_checkmate(rg.g, rg.op_ns, budget, CheckmateCoarsen::Never, n);
      const SwapResult coarse = plan_checkmate(rg.g, rg.op_ns, budget, CheckmateCoarsen::Always, n);
      REQUIRE(coarse.report["coarse"]["chunks"] == n);
      CHECK(coarse.report["status"] == exact.report["status"]);
      if (exact.report["status"] != "optimal") continue;
      CHECK(coarse.report["proved_optimal_on_coarse_graph"] == true);
      CHECK(coarse.report["objective_us"].get<double>() == Approx(exact.report["objective_us"].get<double>()));
      CHECK(load.peak_with(coarse.plan, s.stream_of) <= budget);
      ++compared;
    }
  }
  CHECK(compared > 10);
}
