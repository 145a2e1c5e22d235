#include "parallel/memory_category.h"

namespace dlsim::parallel {

const char* to_string(MemoryCategory c) {
  switch (c) {
    case MemoryCategory::Weights: return "weights";
    case MemoryCategory::Gradients: return "gradients";
    case MemoryCategory::OptimizerState: return "optimizer_state";
    case MemoryCategory::Activations: return "activations";
    case MemoryCategory::Workspaces: return "workspaces";
    case MemoryCategory::GatheredParameters: return "gathered_parameters";
    case MemoryCategory::CommunicationBuckets: return "communication_buckets";
  }
  return "?";
}

MemoryCategory default_category(const Graph& g, const Tensor& t) {
  switch (t.kind) {
    case TensorKind::Weight: return MemoryCategory::Weights;
    case TensorKind::OptimizerState: return MemoryCategory::OptimizerState;
    case TensorKind::Workspace: return MemoryCategory::Workspaces;
    case TensorKind::Activation:
    case TensorKind::Input: return MemoryCategory::Activations;
    case TensorKind::Gradient: {
      // A weight's gradient (of a parameter or a buffer) against an activation's: what the tensor is the
      // gradient of. A gradient without grad_of (a recorded step may leave it out) counts as a weight's.
      if (t.grad_of != kNoTensor) {
        const TensorKind of = g.tensor(t.grad_of).kind;
        return of == TensorKind::Weight ? MemoryCategory::Gradients : MemoryCategory::Activations;
      }
      return MemoryCategory::Gradients;
    }
  }
  return MemoryCategory::Activations;
}

std::vector<MemoryCategory> default_categories(const Graph& g) {
  std::vector<MemoryCategory> c;
  c.reserve(g.tensors().size());
  for (const Tensor& t : g.tensors()) c.push_back(default_category(g, t));
  return c;
}

MemoryCategory category_of(const Graph& g, const std::vector<MemoryCategory>& categories, TensorId t) {
  const auto i = static_cast<size_t>(t);
  return i < categories.size() ? categories[i] : default_category(g, g.tensor(t));
}

}  // namespace dlsim::parallel
