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
// stage t reads it (the paper's linearisation with the hazard count). Objective: the time of the re-runs.
// Variables exist only where they can matter: R_t_i where i can be re-run in t (RematProblem::can_rerun), S_t_v
// for maker(v) < t <= need[v]. Bytes are counted in MiB (the solver's numbers stay near 1).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "policies/swap/remat_problem.h"

namespace dlsim {

struct CheckmateModel {
  std::string lp;        // the model text
  int binaries = 0;
  int constraints = 0;
};
CheckmateModel checkmate_model(const RematProblem& p, uint64_t budget_bytes);

// A solution: which ops run in which stage, and which values are kept into which stage (the solver's values,
// read as set when >= threshold).
struct RematSchedule {
  std::vector<std::vector<int>> recompute;  // [t]: positions i < t re-run in stage t, ascending
  std::vector<std::vector<char>> keep;      // [t][v]: value v kept into stage t
};
RematSchedule checkmate_schedule(const RematProblem& p, const std::map<std::string, double>& values, double threshold = 0.5);

// Turns a schedule into dlsim's plan form: each stage's recomputations become one Recomputation before that
// position; a tensor of a value not kept into a stage where its original lifetime goes on is dropped after the
// last stage that held it and made again by the stage that re-runs its op.
std::vector<Recomputation> recomputations_from(const RematProblem& p, const RematSchedule& s, const Graph& g);

}  // namespace dlsim
