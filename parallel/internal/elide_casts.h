#pragma once
// A dtype cast whose input already has the target dtype copies nothing in PyTorch: Tensor.to(same dtype) returns
// the tensor itself, and autocast's cast cache hands an already-16-bit weight to the op as it is. The training
// graph's autocast casts are made for fp32 weights; once a layout gives a weight (and its gradient) another
// dtype (FSDP's MixedPrecisionPolicy gathers bf16 copies, fsdp_graph.cc), its casts become such copies. This
// pass removes them.
#include "workloads/graph.h"

namespace dlsim::parallel::internal {

// Removes every cast op (attr cast) of one input and one output of the same dtype and shape: its readers read
// the input instead, or, when the output is a parameter's gradient (grad_of a learnable weight), the input's
// writer writes that gradient instead (so the tensor the optimizer and the reduce-scatter read keeps its id).
// Tensors keep their ids (a dropped one is left unused); ops are renumbered in the same order, forward_op
// follows (-1 where it named a dropped op, i.e. the backward of a dropped cast, itself dropped).
// Returns the number of ops removed.
size_t elide_same_dtype_casts(Graph& g);

}  // namespace dlsim::parallel::internal
