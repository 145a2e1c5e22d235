// PyTorch's CUDACachingAllocator.cpp, as it is, in this translation unit (the path comes from CMake), and the
// interface of pytorch_upstream_allocator.h on its DeviceCachingAllocator.
#include PYTORCH_CACHING_ALLOCATOR_CPP

#include "tests/upstream/pytorch_upstream_allocator.h"

namespace dlsim::upstream {

namespace pt = c10::cuda::CUDACachingAllocator;

struct RealPytorchAllocator::Impl {
  std::unique_ptr<pt::Native::DeviceCachingAllocator> da;
  std::unordered_map<void*, pt::Native::Block*> live;
};

// dlsim's streams 0, 1, ... as distinct non-null cudaStream_t values, in the same order (PyTorch orders free
// blocks by the stream handle's value first).
static cudaStream_t stream_handle(int stream) {
  return reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(stream + 1) * 64);
}

RealPytorchAllocator::RealPytorchAllocator(const std::string& settings) : impl_(std::make_unique<Impl>()) {
  pt::CUDAAllocatorConfig::instance().parseArgs(settings.empty() ? nullptr : settings.c_str());
  impl_->da = std::make_unique<pt::Native::DeviceCachingAllocator>();
}

RealPytorchAllocator::~RealPytorchAllocator() {
  for (auto& [p, b] : impl_->live) impl_->da->free(b);
  impl_->live.clear();
  impl_->da->emptyCache();  // gives every segment back, so that no Block outlives the allocator
}

void* RealPytorchAllocator::malloc(uint64_t bytes, int stream) {
  try {
    pt::Native::Block* b = impl_->da->malloc(0, bytes, stream_handle(stream));
    impl_->live.emplace(b->ptr, b);
    return b->ptr;
  } catch (const c10::OutOfMemoryError&) {
    return nullptr;
  } catch (const c10::Error& e) {  // an internal assert or a failed check: not an answer dlsim can give
    throw std::runtime_error(std::string("PyTorch raised c10::Error: ") + e.what());
  }
}

void RealPytorchAllocator::free(void* p) {
  auto it = impl_->live.find(p);
  if (it == impl_->live.end()) throw std::logic_error("RealPytorchAllocator: free of a pointer it did not hand out");
  pt::Native::Block* b = it->second;
  impl_->live.erase(it);
  impl_->da->free(b);
}

void RealPytorchAllocator::empty_cache() { impl_->da->emptyCache(); }

void RealPytorchAllocator::set_memory_fraction(double fraction) { impl_->da->setMemoryFraction(fraction); }

RealPytorchStats RealPytorchAllocator::stats() const {
  const pt::DeviceStats s = impl_->da->getStats();
  const auto agg = static_cast<size_t>(pt::StatType::AGGREGATE);
  return {s.allocated_bytes[agg].current, s.reserved_bytes[agg].current, s.num_alloc_retries, s.num_ooms,
          s.num_sync_all_streams, s.num_device_alloc, s.num_device_free};
}

}  // namespace dlsim::upstream

// PyTorch leaks each allocator's trace buffer on purpose (TraceEntryRingBuffer: it may hold Python state at exit).
// It expects one allocator per device per process; the replay makes one per trace, so LeakSanitizer would report
// each buffer. Nothing else of the allocator outlives it (the destructor frees every block and empties the cache).
extern "C" const char* __lsan_default_suppressions() { return "leak:TraceEntryRingBuffer"; }
