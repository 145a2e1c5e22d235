#pragma once
// The kernels PyTorch's CUDA `cat` launches (aten/src/ATen/native/cuda/Shape.cu, cat_out_cuda), as the fitted
// kernel model sees them (hw/fitted/kernel_shape.h). Two or more contiguous inputs of at most 4 dimensions are
// copied by CatArrayBatchedCopy (parallel_cat): one launch per batch of up to 128 inputs (CAT_ARRAY_BATCH_SIZE),
// grid.y one row per input of the batch, grid.x the blocks the largest input seen so far needs (128 threads each
// moving 16 bytes, at most 32 blocks per SM; PyTorch keeps the largest size across batches, so a later batch's
// rows are at least as wide). A single input, or inputs of more than 4 dimensions, are copied one `copy_` each
// (a contiguous elementwise copy kernel). The zoo's concatenations are contiguous (non-contiguous ones of at most
// 4 dimensions run the same kernel in batches of 64, which dlsim's graphs do not produce).
#include <vector>

#include "hw/fitted/kernel_shape.h"
#include "workloads/graph.h"

namespace dlsim {

inline constexpr int kCatBatchInputs = 128;       // CAT_ARRAY_BATCH_SIZE: inputs per launch
inline constexpr int kCatMaxDims = 4;             // CAT_ARRAY_MAX_INPUT_DIMS
inline constexpr double kCatBlockBytes = 128 * 16;  // 128 threads, one 16-byte vector each per pass
inline constexpr double kCatBlocksPerSm = 32;     // getCatGridContig's max_tb_per_sm

// The launches of a concatenation of tensors of `input_bytes` (each its bytes, in order; an empty one is skipped
// as PyTorch skips it) into an output of `rank` dimensions: each launch's bytes (its inputs read, their part of the
// output written), inputs, blocks per input row, and idle blocks (the row's blocks past each input's end: an input of
// b bytes keeps ceil(b / kCatBlockBytes) of its row busy), on a GPU of `sms` SMs.
std::vector<KernelShape> concat_kernel_shapes(const std::vector<double>& input_bytes, int rank, DType dtype, int sms);

}  // namespace dlsim
