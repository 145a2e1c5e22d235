#pragma once
// The op translation: which cuDNN / cuBLAS call (or small kernel of ours) runs each op on the real GPU, with
// the descriptor shapes taken from the Graph (the calls themselves: validate/gpu/library_calls.h). A pure function
// of the Graph, so that CI (no GPU) tests exactly what dlsim-cuda will ask the libraries for; the CUDA executor
// only turns an OpTranslation into calls.
#include <map>
#include <vector>

#include "validate/gpu/library_calls.h"
#include "workloads/graph.h"

namespace dlsim {

// Throws ConfigError (file "graph", key = op name) when an op cannot be mapped: missing attribute, shape that
// does not match its attributes, mixed data types within one library call. Roles follow the builders'
// conventions (workloads/model_builder.cc, training.cc): forward inputs by position ([x, w, (b)]...), backward
// tensors by identity with the forward's, checked against their shapes. Mixed precision (bf16 activations, fp32
// master weights, autocast's casts as Copy ops) maps too: cuDNN and cuBLAS calls need one data type, which
// autocast guarantees for the ops it runs in bf16; our kernels take each operand's own type.
OpTranslation translate_op(const Graph& g, const Op& op);
std::vector<OpTranslation> translate_graph(const Graph& g);
// Integer tensors read as indices (embedding ids, class targets) and the exclusive bound of their values, so that
// the executor's random inputs stay in range.
std::map<TensorId, int64_t> index_ranges(const Graph& g);

}  // namespace dlsim
