#include "policies/swap/checkmate/checkmate_swap.h"

#include <algorithm>
#include <chrono>

#include "common/atomic_file.h"
#include "common/config_error.h"
#include "policies/swap/core/cbc_solver.h"
#include "policies/swap/checkmate/checkmate_milp.h"
#include "policies/swap/core/program_load.h"
#include "policies/swap/checkmate/remat_problem.h"

namespace dlsim {

const ParamBindings<CheckmateOptions>& CheckmateOptions::parameters() {
  using O = CheckmateOptions;
  static const auto b = ParamBindings<O>()
      .add_all(&O::limit, MemoryLimit::parameters())
      .add("time_limit_s", &O::time_limit_s, "CBC's time limit in seconds (the best plan found by then, with its gap)",
           ParamCheck::in_range(0.01, 86400))
      .add("max_ops", &O::max_ops, "the most ops of a graph the MILP is built for", ParamCheck::in_range(1, 100000))
      .add_choice("solve", &O::lp_rounding, ParamChoices<bool>{{"milp", false}, {"lp-rounding", true}},
                  "milp (the exact MILP, stopped at the time limit) or lp-rounding (the LP relaxation, rounded)")
      .add("swap", &O::swap,
           "the MILP may also copy values to host memory and back over the link, beside recomputing them")
      .add("model_file", &O::model_file,
           "also write the MILP in CPLEX LP format to this file, for another solver or a look (empty: no file)")
      .rule([](const O& o) {
        if (o.swap && o.lp_rounding)
          throw ConfigError("", 0, "swap", "swap: true is solved by the exact MILP only; use solve: milp (the rounding "
                                           "keeps or re-runs values, it has no rule for copies)");
      });
  return b;
}

namespace {

// The paper's deterministic rounding: keep what the relaxation keeps at least `theta` (S* >= theta), then each
// stage re-runs exactly the ops its computation needs that are not kept, recursively; values of ops that cannot
// be re-run are kept.
RematSchedule round_relaxation(const RematProblem& p, const std::map<std::string, double>& lp, double theta) {
  const auto n = static_cast<size_t>(p.n);
  const size_t nv = p.values.size();
  const RematSchedule frac = checkmate_schedule(p, lp, theta);
  RematSchedule s;
  s.recompute.assign(n, {});
  s.keep.assign(n, std::vector<char>(nv, 0));
  std::vector<char> held_prev(nv, 0);  // in memory during stage t-1
  for (size_t t = 0; t < n; ++t) {
    for (size_t v = 0; v < nv; ++v) {
      const RematProblem::Value& x = p.values[v];
      const bool can = held_prev[v] && x.maker < static_cast<int>(t) && x.need >= static_cast<int>(t);
      // A value whose maker cannot be re-run through the end of its need (an input rewritten by then) stays.
      s.keep[t][v] = can && (frac.keep[t][v] || !p.can_rerun(x.maker, std::max(x.need, static_cast<int>(t))));
    }
    std::vector<char> run(n, 0);
    run[t] = 1;
    for (size_t j = t + 1; j-- > 0;) {  // descending: an op's inputs come before it
      if (!run[j]) continue;
      for (int v : j == t ? p.reads[j] : p.rerun_reads(static_cast<int>(j), static_cast<int>(t)))
        if (!s.keep[t][static_cast<size_t>(v)]) run[static_cast<size_t>(p.values[static_cast<size_t>(v)].maker)] = 1;
    }
    for (size_t i = 0; i < t; ++i)
      if (run[i]) s.recompute[t].push_back(static_cast<int>(i));
    for (size_t v = 0; v < nv; ++v) held_prev[v] = s.keep[t][v] || run[static_cast<size_t>(p.values[v].maker)];
  }
  return s;
}

}  // namespace

SwapResult CheckmateSwap::plan(const SwapContext& ctx) {
  const Graph& g = ctx.graph;
  const std::vector<OpId>& order = ctx.schedule.order;
  if (static_cast<int>(order.size()) > o_.max_ops)
    throw ConfigError("", 0, "max_ops", "the graph has " + std::to_string(order.size()) + " ops, above max_ops " +
                                            std::to_string(o_.max_ops) + " (the MILP grows with the square of the ops; "
                                            "raise max_ops to try, or use a heuristic such as checkpoint or dtr)");
  std::vector<double> ns(order.size(), 0.0);
  for (size_t i = 0; i < order.size() && i < ctx.profile.op_end.size(); ++i)
    ns[i] = static_cast<double>(ctx.profile.op_end[i] - ctx.profile.op_start[i]);
  const RematProblem prob = RematProblem::build(g, order, ns);
  const uint64_t budget = o_.limit.resolve(ctx.profile.peak_live_bytes, ctx.device_capacity);
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
    // Rounding at 1/2 can keep both halves of a split and miss the budget: the thresholds from 1/2 up to keeping
    // nothing that can be re-run are tried, and the cheapest plan within the budget wins (else the lowest peak).
    const ProgramLoad load(g, order);
    double best_cost = 0;
    uint64_t best_peak = 0;
    bool have = false, best_fits = false;
    for (double theta : {0.5, 0.6, 0.7, 0.8, 0.9, 0.99, 1.01}) {
      RematSchedule cand = round_relaxation(prob, r.values, theta);
      SwapPlan p = plan_from(prob, cand);
      const uint64_t peak = load.peak_with(p, ctx.schedule.stream_of);
      double cost = 0;
      for (size_t t = 0; t < cand.recompute.size(); ++t)
        for (int i : cand.recompute[t]) cost += prob.rerun_cost(i, static_cast<int>(t));
      const bool fits = peak <= budget;
      if (!have || (fits && (!best_fits || cost < best_cost)) || (!fits && !best_fits && peak < best_peak)) {
        have = true;
        best_fits = fits;
        best_cost = cost;
        best_peak = peak;
        sched = std::move(cand);
        out.plan = std::move(p);
        out.report["rounding_threshold"] = theta;
      }
    }
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
