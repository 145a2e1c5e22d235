#pragma once
// PyTorch's multi_tensor_apply (aten/src/ATen/native/cuda/MultiTensorApply.cuh): how one torch._foreach_* op over
// lists of tensors is cut into kernel launches. Every op of torch.optim's foreach implementations (_multi_tensor_sgd,
// _multi_tensor_adam) is such a pass. The rule, restated (validate/torch/membound_kernels.py restates it alike and
// matched all 345 launches of the H200's twenty profiled CNN steps, grid for grid): each tensor is cut into chunks of
// kChunkSize = 65,536 elements, one 512-thread block per chunk; the chunks are appended, in the list's order (empty
// tensors skipped), to the current launch's table, and the launch goes out when its table holds depth_to_max_blocks
// = 320 blocks, or when it holds depth_to_max_tensors[lists - 1] tensors (110, 64, 48, 36, 30 for 1-5 lists) and
// the last of them has all its chunks in, or at the list's end. A tensor cut by a full table is the next launch's
// first tensor too. (The header's second configuration, for 32 KB kernel arguments, has 2,240 blocks and seven
// times the tensors; no H200 trace here has a grid above 320 blocks, so PyTorch 2.11 ran the 4 KB one there.)
// The rule is PyTorch's, not a GPU's: the training synthesis (training_optimizer.cc) and the recordings' loader
// (torch_step_kinds.cc) use it to say which launches an op stands for; hw/fitted/multi_tensor.h prices them.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dlsim {

inline constexpr int64_t kMultiTensorChunk = 65536;     // elements per chunk, one thread block each
inline constexpr int64_t kMultiTensorMaxBlocks = 320;  // blocks per launch, any list count
inline constexpr int kMultiTensorMaxLists = 5;          // the deepest list count the header configures

// The tensors per launch for `lists` tensor lists (1-5); throws std::invalid_argument outside that range.
int64_t multi_tensor_max_tensors(int lists);

// One launch of a pass.
struct MultiTensorLaunch {
  int64_t blocks = 0;         // its grid: one block per chunk
  int64_t elements = 0;       // the elements of one list it covers
  int64_t largest_chunk = 0;  // its largest chunk's elements: a launch lasts at least that chunk's time on one SM
  int64_t tensors = 0;        // tensors of one list in its table (a cut tensor counts in both its launches)
  size_t closed_by = 0;       // the index (into the pass's list) of the tensor whose chunk sent it
  bool operator==(const MultiTensorLaunch&) const = default;
};

// The launches of one pass over `lists` tensor lists whose tensors (one list's; all lists have the same shapes) have
// `numels` elements, in order. Empty when every tensor is empty.
std::vector<MultiTensorLaunch> multi_tensor_launches(const std::vector<int64_t>& numels, int lists);

// What the launches of a pass over `numels` charge each tensor of the list, so that per-tensor ops (the training
// synthesis keeps one optimizer op per parameter) sum to the pass: each launch is charged to the tensor that closed
// it, with its largest chunk's bytes (`bytes_per_element`: the bytes an element moves over every list, read and
// written).
struct MultiTensorCharge {
  int64_t launches = 0;
  int64_t chunk_bytes = 0;  // the sum over those launches of their largest chunk's elements * bytes_per_element
};
std::vector<MultiTensorCharge> multi_tensor_charges(const std::vector<int64_t>& numels, int lists,
                                                    int64_t bytes_per_element);

}  // namespace dlsim
