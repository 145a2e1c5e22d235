#pragma once
// A concurrency policy assigns every op a stream and fixes the host's issue order.
#include <memory>
#include <vector>

#include "common/registry.h"
#include "hw/cost_model.h"
#include "workloads/graph.h"

namespace dlsim {

struct Schedule {
  std::vector<OpId> order;       // issue order: a topological order of the op DAG
  std::vector<int> stream_of;    // indexed by OpId; compute streams are 0 .. num_streams-1
  int num_streams = 1;
};

class ConcurrencyPolicy {
 public:
  virtual ~ConcurrencyPolicy() = default;
  virtual Schedule schedule(const Graph& g, const KernelCostModel& cost) = 0;
};

using ConcurrencyRegistry = Registry<ConcurrencyPolicy>;
const ConcurrencyRegistry& concurrency_registry();

}  // namespace dlsim
