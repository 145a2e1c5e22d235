#pragma once
// An independent check of a placement: no two buffers that are live at the same time share a byte.
// It shares no code with the planners (a sweep over time with the live buffers kept in address order), so
// that a planner bug cannot hide behind the same bug in its checker.
#include <optional>
#include <string>
#include <vector>

#include "policies/planners/dsa_instance.h"

namespace dlsim {

// nullopt when valid; otherwise a sentence naming the first two clashing buffers (by id) found.
std::optional<std::string> check_placement(const std::vector<DsaBuffer>& buffers,
                                           const std::vector<uint64_t>& offsets);

}  // namespace dlsim
