#pragma once
// Where the channels of an image tensor sit, and what it costs. cuDNN's tensor-core convolution kernels work on
// NHWC data: handed 16-bit NCHW tensors, cuDNN transposes the activations into NHWC before the kernel and the
// result back after it (the nchwToNhwc / nhwcToNchw kernels a profile of an NCHW fp16 network shows), which is
// why NVIDIA's DeepLearningExamples train their AMP CNNs channels_last. With memory_format: nhwc (PyTorch's
// channels_last) the tensors already are NHWC and no transpose runs.
//
// The pass rewrites a training graph (after make_training_graph's synthesis):
//   - NHWC: every convolution (forward, backward-data, backward-filter) carries attr channels_last=1, so that a
//     measured table tells the two layouts apart; nothing else changes.
//   - NCHW, 16-bit activations: every convolution reads its activation operands (x for the forward, dy for both
//     backward ops, x for backward-filter) through a Transpose to NHWC (perm 0,2,3,1), and writes its activation
//     output (y, dx) in NHWC, transposed back (perm 0,3,1,2). The transposes carry attr layout_transpose=1 and
//     their NHWC tensors live from the transpose to the convolution.
//   - NCHW in fp32 (CUDA cores or TF32): cuDNN has NCHW kernels; nothing changes. (A grouped, not depthwise,
//     fp32 NCHW convolution is the exception: cuDNN transposes its operands inside the call; the fitted kernel
//     model counts those transposes as the convolution's own kernels, hw/fitted/conv_backend.h.)
// Assumptions [A]: filters are left as they are (cuDNN also reorders them, but they are small); batch norm and
// pooling run in the layout they are given at the same cost.
#include "workloads/graph.h"
#include "workloads/training_options.h"

namespace dlsim {

Graph apply_memory_format(const Graph& g, MemoryFormat format);

}  // namespace dlsim
