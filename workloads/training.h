#pragma once
// Training-graph synthesis: forward graph -> forward + backward + optimizer, keeping exactly the tensors
// PyTorch's autograd saves for each op, accumulating gradients where a tensor feeds several ops, and a
// cuDNN workspace tensor per convolution.
#include <string>

#include "workloads/graph.h"

namespace dlsim {

enum class Optimizer : uint8_t { SgdMomentum, Adam };
enum class Precision : uint8_t { FP32, MixedBF16 };  // mixed: bf16 activations, fp32 master weights

struct TrainingOptions {
  Optimizer optimizer = Optimizer::SgdMomentum;
  Precision precision = Precision::FP32;
  // cuDNN workspace per convolution, bytes; the cost of the fastest algorithm is modelled as this fraction
  // of the op's input+output bytes, capped (workloads/training.cc documents the choice).
  bool conv_workspace = true;
};

Graph make_training_graph(const Graph& forward, const TrainingOptions& opts);

}  // namespace dlsim
