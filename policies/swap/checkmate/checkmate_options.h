#pragma once
// The `checkmate` policy's parameters (checkmate_swap.h describes the policy), apart so that the coarse solve
// (checkmate_coarse.h) takes them without including the policy that calls it.
#include <cstdint>
#include <string>

#include "common/param_binding.h"
#include "policies/swap/core/memory_limit.h"

namespace dlsim {

enum class CheckmateCoarsen : uint8_t { Auto, Always, Never };

struct CheckmateOptions {
  MemoryLimit limit;
  double time_limit_s = 60;
  int max_ops = 130;
  int coarse_nodes = 40;
  CheckmateCoarsen coarsen = CheckmateCoarsen::Auto;
  int solver_nodes = 500;  // CBC's node limit on a coarse graph (0: none)
  bool lp_rounding = false;
  bool swap = false;
  bool compare_baselines = true;
  std::string model_file;  // where to write the LP model too (empty: nowhere)

  static const ParamBindings<CheckmateOptions>& parameters();  // from_params refuses swap with lp_rounding
};

}  // namespace dlsim
