#include "tests/upstream/tf_bfc_replay.h"

#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "policies/pool/virtual_device_memory.h"
#include "tests/upstream/cuda_stub/cuda_runtime_api.h"
#include "tests/upstream/cuda_stub/cuda_stub.h"
#include "tsl/framework/bfc_allocator.h"
#include "tsl/platform/mutex.h"

namespace dlsim::upstream {
namespace {

// What TensorFlow's GPU BFC allocator sits on (DeviceMemAllocator in TF's device_mem_allocator.h, described, not
// copied): Alloc cudaMallocs exactly the bytes asked for and reports them as received, Free cudaFrees a non-null
// pointer, and regions cannot be coalesced (only the virtual-memory sub-allocator can).
class StubDeviceSubAllocator : public tsl::SubAllocator {
 public:
  StubDeviceSubAllocator() : tsl::SubAllocator({}, {}) {}
  void* Alloc(size_t alignment, size_t num_bytes, size_t* bytes_received) override {
    (void)alignment;  // cudaMalloc's alignment is the device's, far above the BFC allocator's 256 B
    *bytes_received = num_bytes;
    if (num_bytes == 0) return nullptr;
    void* p = nullptr;
    if (cudaMalloc(&p, num_bytes) != cudaSuccess) return nullptr;
    VisitAlloc(p, 0, num_bytes);
    return p;
  }
  void Free(void* ptr, size_t num_bytes) override {
    if (ptr == nullptr) return;
    VisitFree(ptr, 0, num_bytes);
    cudaFree(ptr);
  }
  bool SupportsCoalescing() const override { return false; }
  tsl::AllocatorMemoryType GetMemoryType() const override { return tsl::AllocatorMemoryType::kDevice; }
};

uint64_t report_u64(const PoolPolicy& p, const char* key) { return p.report()[key].get<uint64_t>(); }

}  // namespace

TfBfcReplayResult replay_through_tf_bfc(const TfBfcReplayCase& c) {
  TfBfcReplayResult r;
  VirtualDeviceMemory ours_dev(c.capacity_bytes, c.total_global_mem_bytes);
  VirtualDeviceMemory real_dev(c.capacity_bytes, c.total_global_mem_bytes);
  TfBfcPool ours(ours_dev, c.options);
  use_device(&real_dev);
  const uint64_t waits_before = tsl::stub_runtime::waits_for_memory();
  tsl::BFCAllocator::Options o;
  o.allow_growth = c.options.allow_growth;
  o.garbage_collection = c.options.garbage_collection;
  o.allow_retry_on_failure = true;  // TF's GPU allocator retries (AllocatorRetry) unless told otherwise
  auto real = std::make_unique<tsl::BFCAllocator>(std::make_unique<StubDeviceSubAllocator>(),
                                                  c.options.memory_limit ? c.options.memory_limit : c.capacity_bytes,
                                                  "GPU_0_bfc", o);
  auto finish = [&]() {
    r.cuda_mallocs = real_dev.malloc_calls();
    r.cuda_frees = real_dev.free_calls();
    r.retry_waits = tsl::stub_runtime::waits_for_memory() - waits_before;
    r.gc_regions = report_u64(ours, "gc_freed_regions");
    r.backpedals = report_u64(ours, "backpedals");
    r.peak_reserved = real_dev.peak_reserved();
  };
  auto mismatch = [&](size_t step, const std::string& what) {
    std::ostringstream s;
    s << c.name << ": call " << step << ": " << what;
    r.first_mismatch = s.str();
    finish();
    real.reset();
    use_device(nullptr);
    return r;
  };

  std::map<uint32_t, DevPtr> live;
  std::set<int> streams;
  for (size_t step = 0; step < c.ops.size(); ++step) {
    const testing::AllocTraceOp& op = c.ops[step];
    if (op.alloc) {
      streams.insert(op.stream);
      ++r.allocations;
      auto mine = ours.allocate({op.bytes, op.stream});
      void* theirs = real->AllocateRaw(tsl::Allocator::kAllocatorAlignment, op.bytes);
      if (mine.has_value() != (theirs != nullptr))
        return mismatch(step, std::string("alloc of ") + std::to_string(op.bytes) + " B: " +
                                  (mine ? "dlsim allocated, TF ran out of memory"
                                        : "TF allocated, dlsim ran out of memory"));
      if (!mine) {
        ++r.ooms;
        continue;
      }
      if (*mine != stub_offset(theirs))
        return mismatch(step, "alloc of " + std::to_string(op.bytes) + " B: dlsim at " + std::to_string(*mine) +
                                  ", TF at " + std::to_string(stub_offset(theirs)));
      live.emplace(op.id, *mine);
    } else {
      auto it = live.find(op.id);
      if (it == live.end()) continue;  // its allocation ran out of memory in both
      ++r.frees;
      ours.deallocate(it->second);
      real->DeallocateRaw(stub_pointer(it->second));
      live.erase(it);
    }
    if (ours_dev.reserved() != real_dev.reserved())
      return mismatch(step, "reserved " + std::to_string(ours_dev.reserved()) + " B vs TF's " +
                                std::to_string(real_dev.reserved()));
    const tsl::AllocatorStats stats = *real->GetStats();
    if (static_cast<int64_t>(ours.stats().allocated_bytes) != stats.bytes_in_use)
      return mismatch(step, "bytes in use " + std::to_string(ours.stats().allocated_bytes) + " vs TF's " +
                                std::to_string(stats.bytes_in_use));
    const int64_t pool_bytes = stats.pool_bytes.value_or(-1);
    if (static_cast<int64_t>(report_u64(ours, "reserved_bytes")) != pool_bytes)
      return mismatch(step, "pool bytes " + std::to_string(report_u64(ours, "reserved_bytes")) + " vs TF's " +
                                std::to_string(pool_bytes));
    if (ours_dev.malloc_calls() != real_dev.malloc_calls())
      return mismatch(step, "cudaMalloc calls " + std::to_string(ours_dev.malloc_calls()) + " vs TF's " +
                                std::to_string(real_dev.malloc_calls()));
    if (ours_dev.free_calls() != real_dev.free_calls())
      return mismatch(step, "cudaFree calls " + std::to_string(ours_dev.free_calls()) + " vs TF's " +
                                std::to_string(real_dev.free_calls()));
  }
  r.streams = static_cast<int>(streams.size());
  finish();
  for (const auto& [id, at] : live) {
    ours.deallocate(at);
    real->DeallocateRaw(stub_pointer(at));
  }
  real.reset();
  use_device(nullptr);
  return r;
}

}  // namespace dlsim::upstream
