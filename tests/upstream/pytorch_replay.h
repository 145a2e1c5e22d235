#pragma once
// Replays one allocation trace through dlsim's PytorchCachingPool and through PyTorch's own
// DeviceCachingAllocator (c10/cuda/CUDACachingAllocator.cpp, pytorch_upstream_allocator.h), each on its own
// simulated device of the same size, and compares them call by call: the address of every allocation (or that
// both ran out of memory), and after every call the device's reserved bytes, the allocator's reserved and
// allocated bytes (block sizes, so every rounding and split decision shows), its cudaMalloc (failed ones too) and
// cudaFree calls at the device, and its counters: device allocations and frees (segment maps and unmaps
// included), allocation retries, synchronizations of all streams, out-of-memory answers.
// The options become PYTORCH_CUDA_ALLOC_CONF settings; memory_fraction becomes a
// set_per_process_memory_fraction call before the first allocation. An allocation both refuse is skipped with its
// free. `empty_cache_every` > 0 calls torch.cuda.empty_cache() on both after every that many operations.
#include <string>
#include <vector>

#include "policies/pool/pytorch_caching_pool.h"
#include "policies/pool/testing/synthetic_alloc_trace.h"

namespace dlsim::upstream {

struct PytorchReplayCase {
  std::string name;
  uint64_t capacity_bytes = 0;          // what the device offers the pool
  uint64_t total_global_mem_bytes = 0;  // cudaDeviceProp::totalGlobalMem and cudaMemGetInfo's total (0: capacity)
  PytorchCachingOptions options;
  std::vector<testing::AllocTraceOp> ops;
  size_t empty_cache_every = 0;
};

struct PytorchReplayResult {
  std::string first_mismatch;  // empty when every call agreed
  size_t allocations = 0;      // allocation calls compared
  size_t frees = 0;
  size_t ooms = 0;             // allocations both refused
  size_t empty_caches = 0;
  uint64_t cuda_mallocs = 0;   // cudaMalloc calls of the real allocator, failed ones included
  uint64_t cuda_frees = 0;
  uint64_t device_allocs = 0;  // PyTorch's num_device_alloc (cudaMallocs that succeeded, segment maps)
  uint64_t alloc_retries = 0;  // PyTorch's num_alloc_retries
  uint64_t gc_released = 0;    // dlsim's count of blocks garbage collection freed
  uint64_t peak_reserved = 0;
  int streams = 0;             // distinct streams in the trace
};

// PYTORCH_CUDA_ALLOC_CONF for the options (memory_fraction is not a setting there: it is a call).
std::string pytorch_alloc_conf(const PytorchCachingOptions& o);

PytorchReplayResult replay_through_pytorch(const PytorchReplayCase& c);

}  // namespace dlsim::upstream
