#pragma once
// PyTorch's own DeviceCachingAllocator (c10/cuda/CUDACachingAllocator.cpp, built against the stubs in
// pytorch_stub/ and the stub CUDA runtime in cuda_stub/), behind a small interface that needs no c10 header:
// one device, the settings of PYTORCH_CUDA_ALLOC_CONF given as a string, streams as small integers.
// pytorch_upstream_allocator.cc compiles the upstream file into the same translation unit, so that it can reach
// the allocator class itself (PyTorch exposes it only through the process-wide CUDAAllocator).
#include <cstdint>
#include <memory>
#include <string>

namespace dlsim::upstream {

struct RealPytorchStats {
  int64_t allocated_bytes = 0;  // stats.allocated_bytes[AGGREGATE].current: block sizes of live allocations
  int64_t reserved_bytes = 0;   // stats.reserved_bytes[AGGREGATE].current: cudaMalloc'd and mapped bytes
  int64_t num_alloc_retries = 0;
  int64_t num_ooms = 0;
  int64_t num_sync_all_streams = 0;
  int64_t num_device_alloc = 0;  // cudaMalloc calls that succeeded, and segment maps
  int64_t num_device_free = 0;   // cudaFree calls, and segment unmaps
};

class RealPytorchAllocator {
 public:
  // `settings`: PYTORCH_CUDA_ALLOC_CONF's "key:value,..." (max_split_size_mb, roundup_power2_divisions,
  // garbage_collection_threshold, expandable_segments). The stub runtime's current device must be set.
  explicit RealPytorchAllocator(const std::string& settings);
  ~RealPytorchAllocator();
  RealPytorchAllocator(const RealPytorchAllocator&) = delete;
  RealPytorchAllocator& operator=(const RealPytorchAllocator&) = delete;

  // nullptr: PyTorch raised OutOfMemoryError; any other c10::Error comes out as std::runtime_error.
  void* malloc(uint64_t bytes, int stream);
  void free(void* p);
  void empty_cache();                        // torch.cuda.empty_cache()
  void set_memory_fraction(double fraction);  // torch.cuda.set_per_process_memory_fraction
  RealPytorchStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dlsim::upstream
