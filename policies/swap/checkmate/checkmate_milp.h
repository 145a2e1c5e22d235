#pragma once
// Checkmate's MILP (Jain et al., "Checkmate: Breaking the Memory Wall with Optimal Tensor Rematerialization",
// MLSys 2020, §4) for a RematProblem under a memory budget, written in the CPLEX LP format any MILP solver reads.
// Variables (binary unless said), with values per tensor (remat_problem.h):
//   R_t_i  op i runs in stage t (i < t: a recomputation; R_t_t = 1 is a constant),
//   S_t_v  value v is kept in memory from stage t-1 into stage t,
//   F_t_v_k value v is freed in stage t right after op k (its maker or an op reading it) runs,
//   U_t_k  (continuous, MiB) the memory in stage t after op k runs.
// Constraints: R_t_j <= R_t_m + S_t_v for each value v op j reads, m its maker (inputs are computed or kept);
// S_{t+1}_v <= S_t_v + R_t_m (only what is in memory can be kept); U_t_k follows the ops of stage t in order
// (+ the values the op makes, - the values freed after the op before), with U_t_k + workspace_k R_t_k <=
// budget - base_t; F_t_v_k = 1 exactly when op k runs in stage t, v is not kept into t+1 and no later op of
// stage t reads it (F + hazards >= 1, and F + h <= 1 for each hazard h: tighter than the paper's single row with
// the hazard count, the same plans), and, where k is a re-run, the stage made v
// again (one hazard more than the paper: dlsim's lowering frees a value a replay did not make only after an op of
// the order, so a plan freeing it mid-replay would peak above what the MILP counted; random graphs found it).
// Objective: the time of the re-runs.
// Variables exist only where they can matter: R_t_i where i can be re-run in t (RematProblem::can_rerun), S_t_v
// for maker(v) < t <= need[v]. Bytes are counted in MiB (the solver's numbers stay near 1).
//
// Swapping as an option (Checkmate with `swap: true`: the paging of POET, Patil et al. ICML 2022, in Checkmate's
// stages), with a copy's time known per value (CheckmateSwapCosts):
//   O_t_v  v is copied to the host during stage t: it is in memory in t (S_t_v + R_t_m), written for the last time
//          by then, and not freed in t (O_t_v is one more hazard of F_t_v_k);
//   I_t_v  v is copied back during stage t: its memory is held from the stage's start (it counts in U_t_k), it is in
//          memory in t+1 (S_{t+1}_v <= S_t_v + R_t_m + I_t_v) and a copy was made before t (I_t_v <= sum O_t'_v);
//   T_t    (continuous, us) stage t's time: at least its ops' (op t and its re-runs) and at least each direction's
//          copies (one D2H and one H2D stream, a copy at a time each). The objective is then the sum of the T_t
//          beyond the ops' own time, plus 1e-4 of every copy's time, so that of two equal plans the one with fewer
//          copies wins. A copy is charged to the one stage it runs in: one longer than its stage is a stall here,
//          though the lowered run lets it go on behind later ops, so the MILP overstates what swapping costs.
// Copies serve the ops of the order (I_t_v only while an op after t reads v), not the inputs of re-runs alone.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "policies/swap/checkmate/remat_problem.h"

namespace dlsim {

struct CheckmateModel {
  std::string lp;        // the model text
  int binaries = 0;
  int constraints = 0;
  double objective_offset_us = 0;  // with copies: the ops' own time, in the objective but changed by no plan
  std::vector<std::string> copy_variables;  // the O_t_v and I_t_v (a plan without copies sets them 0)
};
// Per value (RematProblem::values), the time of its copy to the host and back, us.
struct CheckmateSwapCosts {
  std::vector<double> out_us, in_us;
};
CheckmateModel checkmate_model(const RematProblem& p, uint64_t budget_bytes, const CheckmateSwapCosts* swap = nullptr);

// The most memory the model counts in any stage for the plan that re-runs and copies nothing and keeps each value
// from its maker through its last user (base_bytes + kept values + what the op makes + its workspace). When it
// is within the budget that plan is feasible and, costing nothing, optimal: no solver is needed.
uint64_t keep_all_peak_bytes(const RematProblem& p);

// A solution: which ops run in which stage, and which values are kept into which stage (the solver's values,
// read as set when >= threshold).
struct RematSchedule {
  std::vector<std::vector<int>> recompute;  // [t]: positions i < t re-run in stage t, ascending
  std::vector<std::vector<char>> keep;      // [t][v]: value v kept into stage t
  std::vector<std::vector<char>> copy_out;  // [t][v]: v copied to the host during stage t (swap: true only)
  std::vector<std::vector<char>> copy_in;   // [t][v]: v copied back during stage t, in memory in t+1
};
RematSchedule checkmate_schedule(const RematProblem& p, const std::map<std::string, double>& values, double threshold = 0.5);

// Turns a schedule into dlsim's plan form: each stage's recomputations become one Recomputation before that
// position; a tensor of a value not kept into a stage where its original lifetime goes on is dropped after the
// last stage that held it and made again by the stage that re-runs its op. With copies: the first copy of a
// value to the host is an ExtraCopy to the host after position max(last write, t-1); each gap a copy-in ends is
// a SwapAction with no copy of its own (copy_out false), freed after the last stage that held the value, the
// copy issued after position t-2 and needed by op t, where the copy-in ran in stage t-1.
SwapPlan plan_from(const RematProblem& p, const RematSchedule& s);

}  // namespace dlsim
