#pragma once
// Replays one allocation trace through dlsim's TfBfcPool and through TensorFlow's own BFCAllocator (TSL's
// bfc_allocator.cc with its AllocatorRetry, built against the TSL stubs in tsl_stub/ and the stub CUDA runtime in
// cuda_stub/), each on its own simulated device of the same size, and compares them call by call: the address of
// every allocation (or that both ran out of memory), and after every call the device's reserved bytes, the
// allocator's pool bytes and bytes in use (chunk sizes), and the cudaMalloc (failed ones too) and cudaFree calls.
// The real allocator is set up as TensorFlow's GPU allocator is: a sub-allocator that cudaMallocs exactly the
// region asked for and cannot coalesce regions (TF's DeviceMemAllocator), allow_retry_on_failure on, allocations
// with the default attributes (retry_on_failure), no timing counter. Streams do not matter to it: one BFC
// allocator serves every stream of a device. An allocation both refuse is skipped with its free.
#include <string>
#include <vector>

#include "policies/pool/testing/synthetic_alloc_trace.h"
#include "policies/pool/tf_bfc_pool.h"

namespace dlsim::upstream {

struct TfBfcReplayCase {
  std::string name;
  uint64_t capacity_bytes = 0;          // what the device offers the pool
  uint64_t total_global_mem_bytes = 0;  // cudaDeviceProp::totalGlobalMem (0: the capacity)
  TfBfcOptions options;
  std::vector<testing::AllocTraceOp> ops;
};

struct TfBfcReplayResult {
  std::string first_mismatch;  // empty when every call agreed
  size_t allocations = 0;      // allocation calls compared
  size_t frees = 0;
  size_t ooms = 0;             // allocations both refused
  uint64_t cuda_mallocs = 0;   // cudaMalloc calls of the real allocator, failed ones included
  uint64_t cuda_frees = 0;
  uint64_t retry_waits = 0;    // AllocatorRetry's waits for memory (each timed out: nothing else frees)
  uint64_t gc_regions = 0;     // dlsim's count of regions freed by garbage collection
  uint64_t backpedals = 0;     // dlsim's count of cudaMalloc calls retried at 90 %
  uint64_t peak_reserved = 0;
  int streams = 0;             // distinct streams in the trace
};

TfBfcReplayResult replay_through_tf_bfc(const TfBfcReplayCase& c);

}  // namespace dlsim::upstream
