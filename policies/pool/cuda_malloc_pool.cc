#include "policies/pool/cuda_malloc_pool.h"

#include <stdexcept>

#include "policies/pool/pool_accounting.h"

namespace dlsim {

std::optional<DevPtr> CudaMallocPool::allocate(const AllocRequest& req) {
  const uint64_t bytes = at_least_one_byte(req.bytes);
  auto p = device_.malloc(bytes);
  if (!p) {
    ++stats_.num_ooms;
    return std::nullopt;
  }
  live_.emplace(*p, Live{req.bytes, bytes});
  reserved_ += bytes;
  note_alloc(stats_, req.bytes, bytes);
  return p;
}

void CudaMallocPool::deallocate(DevPtr p) {
  auto it = live_.find(p);
  if (it == live_.end()) throw std::logic_error("cuda-malloc: free of an address it did not allocate");
  const Live l = it->second;
  live_.erase(it);
  device_.free(p);
  reserved_ -= l.bytes;
  note_free(stats_, l.requested, l.bytes);
}

nlohmann::json CudaMallocPool::report() const {
  return {{"reserved_bytes", reserved_},
          {"device_mallocs", device_.malloc_calls()},
          {"device_frees", device_.free_calls()}};
}

void register_cuda_malloc(PoolRegistry& r) {
  r.add({"cuda-malloc", "one cudaMalloc/cudaFree per tensor (no pool)", {},
         [](const Params&, DeviceMemory& d) -> std::unique_ptr<PoolPolicy> {
           return std::make_unique<CudaMallocPool>(d);
         }});
}

}  // namespace dlsim
