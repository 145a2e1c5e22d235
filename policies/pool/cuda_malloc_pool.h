#pragma once
// `cuda-malloc`: no pool at all. Every tensor is one cudaMalloc and its free one cudaFree, the baseline that
// caching allocators exist to beat (each call costs a device synchronisation on real hardware).
#include <map>

#include "policies/pool/pool_policy.h"

namespace dlsim {

class CudaMallocPool : public PoolPolicy {
 public:
  explicit CudaMallocPool(DeviceMemory& device) : device_(device) {}

  std::string name() const override { return "cuda-malloc"; }
  std::optional<DevPtr> allocate(const AllocRequest& req) override;
  void deallocate(DevPtr p) override;  // throws std::logic_error on a pointer it did not hand out
  const PoolStats& stats() const override { return stats_; }
  nlohmann::json report() const override;

 private:
  DeviceMemory& device_;
  PoolStats stats_;
  struct Live {
    uint64_t requested;
    uint64_t bytes;  // passed to cudaMalloc
  };
  std::map<DevPtr, Live> live_;
  uint64_t reserved_ = 0;  // sum of live cudaMalloc sizes
};

void register_cuda_malloc(PoolRegistry& r);

}  // namespace dlsim
