#pragma once
// A swap policy decides which tensors leave device memory between uses, and when they go and come back.
#include <memory>
#include <vector>

#include "common/registry.h"
#include "hw/cost_model.h"
#include "workloads/graph.h"

namespace dlsim {

// A profile of one iteration: what the policy learns from running it once.
struct IterationProfile {
  std::vector<OpId> order;          // ops in issue order
  std::vector<TimeNs> op_start;     // indexed by position in `order`
  std::vector<TimeNs> op_end;
};

// One tensor's trip to host memory: copied out after op position `out_after`, its device memory freed when
// the copy completes; copy-in issued after position `in_issue_after` into fresh memory, and op position
// `in_needed_by` waits for it. Positions index the Schedule's order.
struct SwapAction {
  TensorId tensor = kNoTensor;
  int out_after = -1;
  int in_issue_after = -1;
  int in_needed_by = -1;
};

struct SwapPlan {
  std::vector<SwapAction> actions;
};

class SwapPolicy {
 public:
  virtual ~SwapPolicy() = default;
  virtual SwapPlan plan(const Graph& g, const IterationProfile& profile, const TransferModel& link,
                        uint64_t device_capacity) = 0;
};

using SwapRegistry = Registry<SwapPolicy>;
const SwapRegistry& swap_registry();

}  // namespace dlsim
