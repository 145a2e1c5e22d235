#include "experiment/snapshot/allocation_recorder.h"

namespace dlsim {

using Kind = AllocationEvent::Kind;

std::optional<DevPtr> LoggingDeviceMemory::malloc(uint64_t bytes) {
  const uint64_t before = inner_.reserved();
  const std::optional<DevPtr> p = inner_.malloc(bytes);
  if (p) {
    // The size the device charged (cudaMalloc rounds to 512 bytes): what reserved() counts, and what a PyTorch
    // segment's total_size is (the allocator's own rounding included).
    const uint64_t charged = inner_.reserved() - before;
    sizes_[*p] = charged;
    log_.add({Kind::DeviceMalloc, *p, charged, log_.current_stream, true});
  }
  return p;
}

void LoggingDeviceMemory::free(DevPtr p) {
  inner_.free(p);  // throws on a pointer it did not hand out, before anything is logged
  const auto it = sizes_.find(p);
  const uint64_t bytes = it == sizes_.end() ? 0 : it->second;
  if (it != sizes_.end()) sizes_.erase(it);
  log_.add({Kind::DeviceFree, p, bytes, log_.current_stream, true});
}

bool LoggingDeviceMemory::map_pages(DevPtr at, uint64_t bytes) {
  const bool ok = inner_.map_pages(at, bytes);
  if (ok) log_.add({Kind::DeviceMap, at, bytes, log_.current_stream, true});
  return ok;
}

void LoggingDeviceMemory::unmap_pages(DevPtr at, uint64_t bytes) {
  inner_.unmap_pages(at, bytes);
  log_.add({Kind::DeviceUnmap, at, bytes, log_.current_stream, true});
}

std::optional<DevPtr> LoggingPool::allocate(const AllocRequest& req) {
  const size_t at = log_.events().size();
  log_.add({Kind::PoolAllocate, 0, req.bytes, req.stream, false});
  log_.current_stream = req.stream;
  const std::optional<DevPtr> p = inner_.allocate(req);
  log_.current_stream = 0;
  if (p) {
    streams_[*p] = req.stream;
    log_.set_result(at, *p);
  }
  return p;
}

void LoggingPool::deallocate(DevPtr p) {
  const auto it = streams_.find(p);
  const int stream = it == streams_.end() ? 0 : it->second;
  if (it != streams_.end()) streams_.erase(it);
  // Logged before the call: the device frees it makes come after it, as PyTorch's free precedes segment_free.
  log_.add({Kind::PoolDeallocate, p, 0, stream, true});
  log_.current_stream = stream;
  inner_.deallocate(p);
  log_.current_stream = 0;
}

}  // namespace dlsim
