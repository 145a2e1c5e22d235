#pragma once
// Replays one allocation trace through dlsim's CnmemPool and through NVIDIA's own cnmem (src/cnmem.cpp, built
// against the stub runtime in cuda_stub/), each on its own simulated device of the same size, and compares
// them call by call: the address of every allocation (or that both ran out of memory), and after every call
// the device's reserved bytes, cudaMalloc calls (failed ones too) and cudaStreamSynchronize calls.
// Streams are registered with cnmemRegisterStream on their first allocation, as dlsim's pool creates its
// child managers; `stream_children: false` passes every call to cnmem's root (the NULL stream).
// An allocation both refuse is skipped with its free, so a trace goes on past out-of-memory.
#include <string>
#include <vector>

#include "policies/pool/cnmem_pool.h"
#include "policies/pool/testing/synthetic_alloc_trace.h"

namespace dlsim::upstream {

struct CnmemReplayCase {
  std::string name;
  uint64_t capacity_bytes = 0;          // what the device offers the pool
  uint64_t total_global_mem_bytes = 0;  // cudaDeviceProp::totalGlobalMem (0: the capacity)
  CnmemOptions options;
  std::vector<testing::AllocTraceOp> ops;
};

struct CnmemReplayResult {
  std::string first_mismatch;  // empty when every call agreed
  size_t allocations = 0;      // allocation calls compared
  size_t frees = 0;
  size_t ooms = 0;             // allocations both refused
  size_t refused_as_invalid_argument = 0;  // of those, cnmem's CANNOT_STEAL answer: INVALID_ARGUMENT
  uint64_t cuda_mallocs = 0;   // cudaMalloc calls of the real cnmem, failed ones included
  uint64_t stream_syncs = 0;
  uint64_t steals = 0;         // dlsim's count (the real cnmem does not count them)
  uint64_t peak_reserved = 0;
  int streams = 0;             // distinct streams in the trace
};

CnmemReplayResult replay_through_cnmem(const CnmemReplayCase& c);

}  // namespace dlsim::upstream
