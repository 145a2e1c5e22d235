#pragma once
// Training-graph synthesis: forward graph -> forward + backward + optimizer, keeping exactly the tensors
// PyTorch's autograd saves for each op, accumulating gradients where a tensor feeds several ops, and a
// cuDNN workspace tensor per convolution.
#include "workloads/graph.h"
#include "workloads/training_options.h"

namespace dlsim {

Graph make_training_graph(const Graph& forward, const TrainingOptions& opts);

}  // namespace dlsim
