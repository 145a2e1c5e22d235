// Fuzz target: a buffer-lifetime instance CSV (policies/planners/instance_csv.h) placed by the `optimal` planner
// with a node limit and a short time limit, then checked as `dlsim plan` checks it: an invalid placement is a
// finding. Instances of more than kMaxBuffers buffers are skipped (the planner's cost, not the loader's, grows
// with them).
#include <sstream>
#include <stdexcept>

#include "fuzz/fuzz_input.h"
#include "policies/planners/instance_csv.h"
#include "policies/planners/optimal_planner.h"
#include "policies/planners/placement_checker.h"

namespace {
constexpr size_t kMaxBuffers = 64;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dlsim::fuzz::run_loader([&] {
    std::istringstream in(dlsim::fuzz::as_text(data, size));
    const auto buffers = dlsim::read_instance_csv(in, "fuzz.csv");
    if (buffers.size() > kMaxBuffers) return;
    dlsim::OptimalOptions options;
    options.node_limit = 2000;
    options.time_limit_s = 0.05;
    const dlsim::PlanResult r = dlsim::plan_optimal(buffers, options);
    if (auto bad = dlsim::check_placement(buffers, r.offsets))
      throw std::logic_error("optimal produced an invalid placement: " + *bad);
  });
}
