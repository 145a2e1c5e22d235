#include "policies/swap/checkmate/checkmate_coarse.h"

#include <algorithm>
#include <chrono>

#include "common/atomic_file.h"
#include "policies/swap/checkmate/checkmate_milp.h"
#include "policies/swap/checkmate/checkmate_rounding.h"
#include "policies/swap/checkmate/remat_coarsening.h"
#include "policies/swap/checkmate/remat_problem.h"
#include "policies/swap/core/cbc_solver.h"
#include "policies/swap/core/program_load.h"

namespace dlsim {

SwapResult plan_coarse(const SwapContext& ctx, const CheckmateOptions& o, uint64_t budget,
                       const std::vector<double>& op_ns) {
  const Graph& g = ctx.graph;
  const std::vector<OpId>& order = ctx.schedule.order;
  const auto t0 = std::chrono::steady_clock::now();
  const ProgramLoad load(g, order);
  const RematCoarsening c = coarsen_remat(g, order, op_ns, remat_chunks(g, order, o.coarse_nodes));
  const RematProblem prob = RematProblem::build(c.graph, c.order, c.op_ns);
  SwapResult out;
  out.target_bytes = budget;
  out.report["mode"] = o.lp_rounding ? "lp-rounding" : "milp";
  out.report["swap"] = false;
  out.report["budget_bytes"] = budget;
  out.report["coarse"] = {{"ops", order.size()}, {"chunks", c.chunks()}, {"forward_chunks", c.forward_chunks},
                          {"values", prob.values.size()}};
  if (!o.model_file.empty()) write_file_atomically(o.model_file, checkmate_model(prob, budget).lp, "model_file");
  if (load.peak() <= budget) {  // nothing to plan, as for an op-level graph (checkmate_swap.cc)
    out.report["solver"] = "none";
    out.report["status"] = "optimal";
    out.report["keep_all_peak_bytes"] = load.peak();
    out.report["note"] = "the plan that re-runs nothing fits the budget: nothing to plan, the solver was not started";
    out.report["objective_us"] = 0.0;
    out.report["lower_bound_us"] = 0.0;
    out.report["gap"] = 0.0;
    out.report["proved_optimal"] = true;
    return out;
  }
  out.report["solver"] = "cbc";
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  nlohmann::json attempts = nlohmann::json::array();
  bool have = false, fits = false, deterministic = true;
  uint64_t best_peak = 0, aim = budget;
  double best_rerun_us = 0;
  MilpResult best_r;
  for (int attempt = 0; attempt < 4; ++attempt) {
    // What is left of time_limit_s for the whole plan, less 5 s for the lowering and the baselines' plans.
    const double left = o.time_limit_s - elapsed() - 5;
    if (attempt > 0 && left < 1) break;
    const CheckmateModel model = checkmate_model(prob, aim);
    const MilpResult r = solve_with_cbc(model.lp, std::max(left, 1.0), o.lp_rounding, nullptr, o.solver_nodes);
    if (r.status == "time-limit" || r.status == "killed") deterministic = false;
    nlohmann::json a = {{"coarse_budget_bytes", aim}, {"status", r.status}, {"binaries", model.binaries},
                        {"constraints", model.constraints}};
    const bool solved = r.has_solution || r.relaxation_only || (o.lp_rounding && r.status == "optimal");
    if (!solved) {
      attempts.push_back(a);
      break;
    }
    RematSchedule sched;
    SwapPlan plan;
    uint64_t peak = 0;
    auto lower = [&](const RematSchedule& s) {
      SwapPlan p = c.lower(plan_from(prob, s));
      const uint64_t pk = load.peak_with(p, ctx.schedule.stream_of);
      return std::make_pair(std::move(p), pk);
    };
    if (o.lp_rounding || r.relaxation_only) {
      RoundedPlan rp = round_relaxation_best(prob, r.values, budget, lower);
      sched = std::move(rp.schedule);
      plan = std::move(rp.plan);
      peak = rp.peak_bytes;
      a["rounding_threshold"] = rp.threshold;
    } else {
      sched = checkmate_schedule(prob, r.values);
      std::tie(plan, peak) = lower(sched);
    }
    const double rerun_us = rerun_ns(prob, sched) / 1000.0;
    const bool ok = peak <= budget;
    a["objective_us"] = rerun_us;
    a["lower_bound_us"] = r.bound;
    a["lowered_peak_bytes"] = peak;
    a["fits"] = ok;
    attempts.push_back(a);
    if (!have || (ok && !fits) || (!ok && !fits && peak < best_peak)) {
      have = true;
      fits = ok;
      best_peak = peak;
      best_rerun_us = rerun_us;
      best_r = r;
      out.plan = std::move(plan);
      out.report["status"] = r.status;
      out.report["coarse_budget_bytes"] = aim;
    }
    if (ok || peak - budget >= aim) break;
    aim -= peak - budget;  // the lowered plan's excess over the budget, taken off the coarse budget
  }
  out.report["attempts"] = attempts;
  out.report["deterministic"] = deterministic;
  if (!have) {
    const std::string status = attempts.back()["status"];
    out.report["status"] = status;
    out.report["note"] = status == "infeasible"
                             ? "no recomputation plan of the coarse graph fits the budget: the run keeps everything"
                             : "the solver found no plan in the time limit: the run keeps everything";
    return out;
  }
  out.report["planned_peak_bytes"] = best_peak;
  out.report["objective_us"] = best_rerun_us;
  const bool rounded = o.lp_rounding || best_r.relaxation_only;
  if (best_r.relaxation_only && !o.lp_rounding)
    out.report["fallback"] = "no integer solution within the time limit: the LP relaxation was rounded";
  out.report["lower_bound_us"] = best_r.bound;
  out.report["lower_bound_on"] = "the coarse MILP at coarse_budget_bytes: plans that re-run whole segments and keep or "
                                 "drop a segment's values together, counted per segment (not op-level plans)";
  out.report["gap"] = best_rerun_us > 0 ? (best_rerun_us - best_r.bound) / best_rerun_us : 0.0;
  out.report["proved_optimal"] = false;  // on the coarse graph at most; the op-level optimum is not known
  out.report["proved_optimal_on_coarse_graph"] = !rounded && best_r.status == "optimal";
  return out;
}

}  // namespace dlsim
