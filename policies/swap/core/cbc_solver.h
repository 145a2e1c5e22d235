#pragma once
// Runs the COIN-OR CBC solver (Debian package coinor-cbc, the `cbc` program) on a model in CPLEX LP format: a
// separate process, so that dlsim neither links the solver nor crashes with it. Single-threaded, so that a run
// that ends by optimality or by a node limit is the same on every machine; one stopped by the time limit depends
// on the machine.
#include <map>
#include <stdexcept>
#include <string>

namespace dlsim {

// The solver is not installed, or it failed: the message says which package to install or what CBC printed.
class SolverError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MilpResult {
  std::string status;         // "optimal", "time-limit", "infeasible", "unbounded", "stopped" (the node limit), or
                              // "killed" (still running at 1.5 times its time limit plus 5 s: stopped, no solution)
  bool has_solution = false;  // an integer solution was found (optimal or the incumbent when stopped)
  bool relaxation_only = false;  // stopped with no integer solution: `values` are the LP relaxation's
  double objective = 0;       // of that solution
  double bound = 0;           // the best lower bound CBC proved (= objective when optimal)
  double gap = 0;             // (objective - bound) / max(|objective|, 1e-9); 0 when optimal
  std::map<std::string, double> values;  // nonzero variables of the solution
};

// `relax`: solve the LP relaxation only (the binaries as 0..1 continuous). `start`: a known solution (variable ->
// value, the unnamed ones 0) handed to CBC as its MIP start, so that the result is never worse than it.
// `time_limit_s` is wall-clock time (CBC's timeMode elapsed). `max_nodes` > 0: CBC stops after that many
// branch-and-bound nodes (status "stopped"), whatever the machine's speed.
MilpResult solve_with_cbc(const std::string& lp_model, double time_limit_s, bool relax = false,
                          const std::map<std::string, double>* start = nullptr, int max_nodes = 0);

}  // namespace dlsim
