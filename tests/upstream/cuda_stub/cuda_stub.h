#pragma once
// The stub CUDA runtime's side that tests see: which simulated device cudaMalloc/cudaFree use, how device
// addresses map to pointers, and what the upstream code asked of the runtime.
#include <cstdint>

#include "policies/pool/pool_policy.h"

namespace dlsim::upstream {

// Device offsets become pointers at this base, so that no allocation is ever NULL (offset 0 is a valid address
// on the simulated device, and upstream code treats NULL as failure).
constexpr uintptr_t kStubPointerBase = uintptr_t{1} << 40;

inline void* stub_pointer(DevPtr p) { return reinterpret_cast<void*>(kStubPointerBase + p); }
inline DevPtr stub_offset(const void* p) { return reinterpret_cast<uintptr_t>(p) - kStubPointerBase; }

struct StubRuntimeCalls {
  uint64_t malloc_calls = 0;  // every cudaMalloc, failed ones included
  uint64_t failed_mallocs = 0;
  uint64_t free_calls = 0;
  uint64_t invalid_frees = 0;  // cudaFree of a pointer cudaMalloc never returned (cudaErrorInvalidValue)
  uint64_t stream_syncs = 0;
  uint64_t unsupported_calls = 0;  // cudaMallocManaged and friends: the replays never ask for them
};

// The device the stub's cudaMalloc/cudaFree use until the next call (nullptr: every cudaMalloc fails).
// cudaGetDeviceProperties reports its total_global_mem(). Resets the call counts.
void use_device(DeviceMemory* device);
DeviceMemory* current_device();  // the device use_device set (nullptr: none)
const StubRuntimeCalls& stub_calls();

}  // namespace dlsim::upstream
