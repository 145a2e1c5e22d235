#pragma once
// What a byte of device memory holds, for the breakdown of the peak (dlsim run --json's memory_breakdown, issue 32
// item 4 and issue 29 item 5). A tensor's kind says most of it; the rank-local graph (rank_local_graph.h) names
// the tensors a data-parallel layout adds: gathered parameters and communication buffers.
#include <array>
#include <cstdint>
#include <vector>

#include "workloads/graph.h"

namespace dlsim::parallel {

enum class MemoryCategory : uint8_t {
  Weights,               // parameters and buffers a rank keeps (its shard under FSDP)
  Gradients,             // weight gradients (the unsharded ones until their reduce-scatter, then the shard)
  OptimizerState,        // momentum, exp_avg, exp_avg_sq (sharded under FSDP and ZeRO)
  Activations,           // activations, their gradients and the input batch
  Workspaces,            // scratch of one op (cuDNN workspaces, the foreach optimizer's temporary)
  GatheredParameters,    // FSDP: a unit's all-gathered (unsharded) parameters
  CommunicationBuckets,  // DDP's bucket buffers, FSDP's reduce-scatter input, ZeRO-2's buckets
};
inline constexpr std::array kMemoryCategories = {
    MemoryCategory::Weights,    MemoryCategory::Gradients,          MemoryCategory::OptimizerState,
    MemoryCategory::Activations, MemoryCategory::Workspaces,        MemoryCategory::GatheredParameters,
    MemoryCategory::CommunicationBuckets};
// "weights", "gradients", "optimizer_state", "activations", "workspaces", "gathered_parameters",
// "communication_buckets": the JSON keys of the breakdown.
const char* to_string(MemoryCategory c);

// By the tensor's kind: a weight's gradient is Gradients, an activation's gradient Activations (it carries the
// batch), the input batch Activations.
MemoryCategory default_category(const Graph& g, const Tensor& t);
// One per tensor of g, by default_category.
std::vector<MemoryCategory> default_categories(const Graph& g);
// categories[t] when the list has it, else default_category (a tensor added after the list was made, such as a
// measured cuDNN scratch).
MemoryCategory category_of(const Graph& g, const std::vector<MemoryCategory>& categories, TensorId t);

}  // namespace dlsim::parallel
