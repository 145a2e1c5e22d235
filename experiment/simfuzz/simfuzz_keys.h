#pragma once
// The simulation fuzzer's checks of the figures that are not times or bytes: the sweep key every case would have
// in a runs.csv (experiment/sweep/runs_csv_row.h) and the swap figures' flags (experiment/swap_planning.h). Each
// returns what is wrong, or nothing.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "experiment/experiment.h"

namespace dlsim {

// The key is exact and canonical over hw_override: changing any one value in it (a list element included),
// adding or dropping a list element changes the key; writing its mappings in another order does not; and the key
// survives being written as a runs.csv row and read back (row_key).
std::optional<std::string> check_sweep_key(const Experiment& e);

// swap_limit_met is the simulated peak against a target that is never 0 for a policy given a limit; a gap to the
// lower bound is given only where the bound applies (the plan only copies and met its target), and is not
// negative.
std::optional<std::string> check_swap_flags(const Experiment& e, const nlohmann::json& figures, uint64_t peak_live_bytes);

}  // namespace dlsim
