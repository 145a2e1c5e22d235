#include "policies/swap/checkmate/checkmate_swap.h"

#include <algorithm>
#include <chrono>

#include "common/atomic_file.h"
#include "common/config_error.h"
#include "policies/swap/core/cbc_solver.h"
#include "policies/swap/checkmate/checkmate_baselines.h"
#include "policies/swap/checkmate/checkmate_coarse.h"
#include "policies/swap/checkmate/checkmate_milp.h"
#include "policies/swap/checkmate/checkmate_rounding.h"
#include "policies/swap/core/program_load.h"
#include "policies/swap/checkmate/remat_problem.h"

namespace dlsim {

SwapResult CheckmateSwap::plan(const SwapContext& ctx) {
  const std::vector<OpId>& order = ctx.schedule.order;
  const bool coarse = o_.coarsen == CheckmateCoarsen::Always ||
                      (o_.coarsen == CheckmateCoarsen::Auto && static_cast<int>(order.size()) > o_.max_ops);
  if (!coarse && static_cast<int>(order.size()) > o_.max_ops)
    throw ConfigError("", 0, "max_ops", "the graph has " + std::to_string(order.size()) + " ops, above max_ops " +
                                            std::to_string(o_.max_ops) + " (the MILP grows with the square of the ops; "
                                            "raise max_ops to try, set coarsen: auto, or use a heuristic such as "
                                            "checkpoint or dtr)");
  if (coarse && o_.swap)
    throw ConfigError("", 0, "swap", "the graph has " + std::to_string(order.size()) + " ops, above max_ops " +
                                         std::to_string(o_.max_ops) + ", and swap: true is solved on the op-level "
                                         "graph only, not on a coarse one: raise max_ops, or set swap: false");
  std::vector<double> ns(order.size(), 0.0);
  for (size_t i = 0; i < order.size() && i < ctx.profile.op_end.size(); ++i)
    ns[i] = static_cast<double>(ctx.profile.op_end[i] - ctx.profile.op_start[i]);
  const uint64_t budget = o_.limit.resolve(ctx.profile.peak_live_bytes, ctx.device_capacity);
  SwapResult out = coarse ? plan_coarse(ctx, o_, budget, ns) : plan_exact(ctx, budget, ns);
  if (o_.compare_baselines) keep_the_best_of_baselines(ctx, budget, out);
  return out;
}

SwapResult CheckmateSwap::plan_exact(const SwapContext& ctx, uint64_t budget, const std::vector<double>& ns) const {
  const Graph& g = ctx.graph;
  const std::vector<OpId>& order = ctx.schedule.order;
  const RematProblem prob = RematProblem::build(g, order, ns);
  CheckmateSwapCosts copies;
  if (o_.swap)
    for (const RematProblem::Value& v : prob.values) {
      copies.out_us.push_back(static_cast<double>(ctx.link.copy_time(CopyDir::DeviceToHost, v.bytes, true)) / 1000.0);
      copies.in_us.push_back(static_cast<double>(ctx.link.copy_time(CopyDir::HostToDevice, v.bytes, true)) / 1000.0);
    }
  // The plan that re-runs nothing already fits: it is optimal, and the solver (a process and a folder of model
  // files, minutes on a large graph) is not started.
  const uint64_t keep_all_peak = keep_all_peak_bytes(prob);
  const bool limit_binds = keep_all_peak > budget;
  const CheckmateModel model =
      limit_binds || !o_.model_file.empty() ? checkmate_model(prob, budget, o_.swap ? &copies : nullptr) : CheckmateModel{};
  if (!o_.model_file.empty()) {
    write_file_atomically(o_.model_file, model.lp, "model_file");
  }
  SwapResult out;
  if (!limit_binds) {
    out.target_bytes = budget;
    out.report["solver"] = "none";
    out.report["mode"] = o_.lp_rounding ? "lp-rounding" : "milp";
    out.report["swap"] = o_.swap;
    out.report["status"] = "optimal";
    out.report["budget_bytes"] = budget;
    out.report["keep_all_peak_bytes"] = keep_all_peak;
    out.report["note"] = "the plan that re-runs nothing fits the budget: nothing to plan, the solver was not started";
    if (o_.swap) {
      out.report["rerun_us"] = 0.0;
      out.report["copy_stall_us"] = 0.0;
      out.report["copies_to_host"] = 0;
      out.report["copies_back"] = 0;
    }
    out.report["objective_us"] = 0.0;
    out.report["lower_bound_us"] = 0.0;
    out.report["gap"] = 0.0;
    out.report["proved_optimal"] = true;
    return out;
  }
  MilpResult r;
  if (!o_.swap) {
    r = solve_with_cbc(model.lp, o_.time_limit_s, o_.lp_rounding);
  } else {
    // The MILP with copies is larger and CBC finds its first plans slowly: the plan without copies is solved first
    // (half the time limit) and handed over as the MIP start, so that allowing copies never gives a worse plan.
    const auto t0 = std::chrono::steady_clock::now();
    const MilpResult plain = solve_with_cbc(checkmate_model(prob, budget).lp, o_.time_limit_s / 2);
    const double used = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.report["without_copies"] = {{"status", plain.status}, {"objective_us", plain.has_solution ? plain.objective : 0.0}};
    std::map<std::string, double> start;
    if (plain.has_solution) {
      start = plain.values;
      for (const std::string& v : model.copy_variables) start[v] = 0;
    }
    r = solve_with_cbc(model.lp, std::max(o_.time_limit_s - used, o_.time_limit_s / 2), false,
                       plain.has_solution ? &start : nullptr);
  }

  out.target_bytes = budget;
  out.report["solver"] = "cbc";
  out.report["mode"] = o_.lp_rounding ? "lp-rounding" : "milp";
  out.report["swap"] = o_.swap;
  out.report["status"] = r.status;
  out.report["binaries"] = model.binaries;
  out.report["constraints"] = model.constraints;
  out.report["budget_bytes"] = budget;
  // No integer plan within the time limit: round the relaxation CBC left, as `solve: lp-rounding` would.
  const bool round = o_.lp_rounding || r.relaxation_only;
  if (r.relaxation_only && !o_.lp_rounding)
    out.report["fallback"] = o_.swap ? "no integer solution within the time limit: the LP relaxation was rounded, "
                                       "with no copies (the rounding keeps or re-runs values)"
                                     : "no integer solution within the time limit: the LP relaxation was rounded";
  if (!r.has_solution && !(o_.lp_rounding && r.status == "optimal") && !r.relaxation_only) {
    out.report["note"] = r.status == "infeasible" ? (o_.swap ? "no plan of recomputations and copies fits the budget: the run keeps everything"
                                                             : "no recomputation plan fits the budget: the run keeps everything")
                                                  : "the solver found no plan in the time limit: the run keeps everything";
    return out;
  }
  RematSchedule sched;
  if (!round) {
    sched = checkmate_schedule(prob, r.values);
    out.plan = plan_from(prob, sched);
  } else {
    const ProgramLoad load(g, order);
    RoundedPlan best = round_relaxation_best(prob, r.values, budget, [&](const RematSchedule& cand) {
      SwapPlan p = plan_from(prob, cand);
      const uint64_t peak = load.peak_with(p, ctx.schedule.stream_of);
      return std::make_pair(std::move(p), peak);
    });
    sched = std::move(best.schedule);
    out.plan = std::move(best.plan);
    out.report["rounding_threshold"] = best.threshold;
  }
  // The plan's time by the MILP's own account: the re-runs, and the copies each stage's ops do not cover.
  double rerun_us = 0, stall_us = 0;
  int copies_out = 0, copies_in = 0;
  for (size_t t = 0; t < sched.recompute.size(); ++t) {
    double ops_us = prob.cost[t] / 1000.0, out_us = 0, in_us = 0;
    for (int i : sched.recompute[t]) {
      rerun_us += prob.rerun_cost(i, static_cast<int>(t)) / 1000.0;
      ops_us += prob.rerun_cost(i, static_cast<int>(t)) / 1000.0;
    }
    for (size_t v = 0; !sched.copy_out.empty() && v < prob.values.size(); ++v) {
      if (sched.copy_out[t][v]) out_us += copies.out_us[v], ++copies_out;
      if (sched.copy_in[t][v]) in_us += copies.in_us[v], ++copies_in;
    }
    stall_us += std::max(0.0, std::max(out_us, in_us) - ops_us);
  }
  if (o_.swap) {
    out.report["rerun_us"] = rerun_us;
    out.report["copy_stall_us"] = stall_us;
    out.report["copies_to_host"] = copies_out;
    out.report["copies_back"] = copies_in;
  }
  out.report["objective_us"] = round ? rerun_us : rerun_us + stall_us;
  out.report["lower_bound_us"] = r.bound - model.objective_offset_us;
  // Rounded: the gap to the relaxation's objective, a lower bound on any plan.
  // With copies the solver's objective also holds the ops' own time (model.objective_offset_us): taken out here.
  const double solver_us = r.objective - model.objective_offset_us;
  out.report["gap"] = round ? (rerun_us - solver_us) / std::max(rerun_us, 1e-9)
                            : (o_.swap ? (r.objective - r.bound) / std::max(solver_us, 1e-9) : r.gap);
  out.report["proved_optimal"] = !round && r.status == "optimal";
  return out;
}

}  // namespace dlsim
