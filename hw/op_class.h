#pragma once
// The op classes the kernel-time model gives their own efficiency: the kinds of library kernel whose achieved
// fraction of peak differs (cuDNN's forward, backward-data and backward-filter convolutions; cuBLAS GEMMs) and
// the memory-bound families (elementwise, normalisation, reductions, optimizer steps).
#include <cstdint>
#include <vector>

#include "workloads/graph.h"

namespace dlsim {

enum class OpClass : uint8_t {
  ConvFwd, ConvDgrad, ConvWgrad, Gemm,                 // compute-bound: tensor cores or CUDA cores
  Elementwise, Normalization, Reduction, Optimizer,    // memory-bound
};
const char* to_string(OpClass c);  // "conv_fwd", "gemm", "normalization", ...
const std::vector<OpClass>& compute_classes();
const std::vector<OpClass>& memory_classes();

// conv_fwd/dgrad/wgrad: Conv2d, Conv2dBwdData, Conv2dBwdFilter; gemm: Linear, MatMul and FlashAttention, forward
// and backward; normalization: batch, layer and RMS norm, forward and backward; reduction: pooling, softmax, cross
// entropy, embedding gather/scatter, the K/V repeat's backward sum and broadcast reductions (an Other op with reduce_broadcast); optimizer: SGD and Adam
// steps and AMP's gradient unscale (an Other op with amp_unscale); elementwise: everything else (activations,
// add, mul, dropout, copies, casts, transposes, concat, gradient accumulation).
OpClass op_class(const Op& op);

}  // namespace dlsim
