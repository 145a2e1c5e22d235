#pragma once
// Stand-in for c10/cuda/CUDACachingAllocator.h and the c10 core types it brings in (Device, DataPtr, CUDAStream,
// the registry, the approximate clock), for the upstream replay (tests/upstream/README.md): the declarations that
// PyTorch's CUDACachingAllocator.cpp defines or uses, written from how that file uses them. Nothing here is
// PyTorch's code; stats, trace entries and snapshots are plain structs with the fields the file fills in.
#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "c10/cuda/CUDAMacros.h"
#include "c10/util/Exception.h"

namespace c10 {

using DeviceIndex = int8_t;
enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
constexpr DeviceType kCUDA = DeviceType::CUDA;
struct Device {
  Device(DeviceType t, DeviceIndex i) : type(t), index(i) {}
  DeviceType type;
  DeviceIndex index;
};

using DeleterFnPtr = void (*)(void*);
class DataPtr {
 public:
  DataPtr(void* data, void* ctx, DeleterFnPtr deleter, Device device)
      : data_(data), ctx_(ctx), deleter_(deleter), device_(device) {}
  void* get() const { return data_; }
  DeleterFnPtr get_deleter() const { return deleter_; }

 private:
  void* data_;
  void* ctx_;
  DeleterFnPtr deleter_;
  Device device_;
};

inline void reportMemoryUsageToProfiler(void*, int64_t, size_t, size_t, Device) {}
inline void reportOutOfMemoryToProfiler(int64_t, size_t, size_t, Device) {}

using approx_time_t = uint64_t;
inline approx_time_t getApproximateTime() { return 0; }  // the replay records no trace
struct ApproximateClockToUnixTimeConverter {
  std::function<time_t(approx_time_t)> makeConverter() {
    return [](approx_time_t t) { return static_cast<time_t>(t); };
  }
};

// The free-memory callback registry (C10_DEFINE_REGISTRY): no callbacks are registered in the replay.
struct FreeMemoryCallback {
  virtual ~FreeMemoryCallback() = default;
  virtual bool Execute() = 0;
};
template <typename T>
struct Registry {
  std::vector<std::string> Keys() const { return {}; }
  std::unique_ptr<T> Create(const std::string&) { return nullptr; }
};
#define C10_DEFINE_REGISTRY(name, type)      \
  ::c10::Registry<type>* name() {              \
    static ::c10::Registry<type> registry;     \
    return &registry;                          \
  }

namespace cuda {

// A stream: the replay's stream numbers, as cudaStream_t values (see pytorch_replay.cc).
class CUDAStream {
 public:
  CUDAStream(cudaStream_t s, DeviceIndex d) : stream_(s), device_(d) {}
  cudaStream_t stream() const { return stream_; }
  operator cudaStream_t() const { return stream_; }
  DeviceIndex device_index() const { return device_; }
  int64_t id() const { return static_cast<int64_t>(reinterpret_cast<uintptr_t>(stream_)); }
  bool operator==(const CUDAStream& o) const { return stream_ == o.stream_ && device_ == o.device_; }

 private:
  cudaStream_t stream_;
  DeviceIndex device_;
};
inline CUDAStream getCurrentCUDAStream(DeviceIndex d = 0) { return CUDAStream(nullptr, d); }

inline DeviceIndex device_count() { return 1; }
inline cudaError_t GetDevice(DeviceIndex* d) {
  *d = 0;
  return cudaSuccess;
}
inline cudaError_t SetDevice(DeviceIndex d) { return d == 0 ? cudaSuccess : cudaErrorInvalidValue; }
inline cudaError_t MaybeSetDevice(DeviceIndex d) { return SetDevice(d); }

enum class CaptureStatus { None = 0, Active = 1 };
inline CaptureStatus currentStreamCaptureStatusMayInitCtx() { return CaptureStatus::None; }
struct CUDAStreamCaptureModeGuard {
  explicit CUDAStreamCaptureModeGuard(cudaStreamCaptureMode) {}
};

namespace CUDACachingAllocator {

extern const size_t kLargeBuffer;

struct Stat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;
  int64_t freed = 0;
};
enum struct StatType : uint64_t { AGGREGATE = 0, SMALL_POOL = 1, LARGE_POOL = 2, NUM_TYPES = 3 };
using StatArray = std::array<Stat, static_cast<size_t>(StatType::NUM_TYPES)>;

struct DeviceStats {
  StatArray allocation;
  StatArray segment;
  StatArray active;
  StatArray inactive_split;
  StatArray allocated_bytes;
  StatArray reserved_bytes;
  StatArray active_bytes;
  StatArray inactive_split_bytes;
  StatArray requested_bytes;
  int64_t num_alloc_retries = 0;
  int64_t num_ooms = 0;
  Stat oversize_allocations;
  Stat oversize_segments;
  int64_t num_sync_all_streams = 0;
  int64_t num_device_alloc = 0;
  int64_t num_device_free = 0;
  int64_t max_split_size = 0;
};

struct GatheredContext {
  virtual ~GatheredContext() = default;
};
using CreateContextFn = std::shared_ptr<GatheredContext> (*)();
enum struct RecordContext { NEVER = 0, STATE = 1, ALLOC = 2, ALL = 3 };

using CaptureId_t = unsigned long long;
using MempoolId_t = std::pair<CaptureId_t, CaptureId_t>;

struct TraceEntry {
  enum Action {
    ALLOC,
    FREE_REQUESTED,
    FREE_COMPLETED,
    SEGMENT_ALLOC,
    SEGMENT_FREE,
    SEGMENT_MAP,
    SEGMENT_UNMAP,
    SNAPSHOT,
    OOM,
    USER_DEFINED
  };
  TraceEntry(Action a, DeviceIndex d, size_t addr, size_t size, cudaStream_t s, approx_time_t t,
             std::shared_ptr<GatheredContext> ctx = nullptr)
      : action_(a), device_(d), addr_(addr), context_(std::move(ctx)), stream_(s), size_(size) {
    time_.approx_t_ = t;
  }
  Action action_;
  DeviceIndex device_;
  size_t addr_;
  std::shared_ptr<GatheredContext> context_;
  cudaStream_t stream_;
  size_t size_;
  struct {
    approx_time_t approx_t_ = 0;
    time_t t_ = 0;
  } time_;
};

struct BlockInfo {
  size_t size = 0;
  size_t requested_size = 0;
  int32_t gc_counter = 0;
  bool allocated = false;
  bool active = false;
  std::shared_ptr<GatheredContext> context_when_allocated;
};
struct SegmentInfo {
  DeviceIndex device = 0;
  size_t address = 0;
  size_t total_size = 0;
  size_t requested_size = 0;
  size_t allocated_size = 0;
  size_t active_size = 0;
  cudaStream_t stream = nullptr;
  bool is_large = false;
  bool is_expandable = false;
  MempoolId_t owner_private_pool_id = {0, 0};
  std::vector<BlockInfo> blocks;
  std::shared_ptr<GatheredContext> context_when_allocated;
};
struct AllocatorConfigInfo {
  double garbage_collection_threshold = 0;
  size_t max_split_size = 0;
  size_t pinned_num_register_threads = 0;
  bool expandable_segments = false;
  bool release_lock_on_malloc = false;
  bool pinned_use_host_register = false;
  std::string last_allocator_settings;
  std::vector<size_t> roundup_power2_divisions;
};
struct SnapshotInfo {
  std::vector<SegmentInfo> segments;
  std::vector<std::vector<TraceEntry>> device_traces;
  AllocatorConfigInfo config_metadata;
};
struct AllocatorState {
  virtual ~AllocatorState() = default;
};
struct CheckpointDelta {
  std::vector<void*> ptrs_freed;
  std::vector<DataPtr> dataptrs_allocd;
};
struct ShareableHandle {
  ptrdiff_t offset;
  std::string handle;
};

using OutOfMemoryObserver =
    std::function<void(int64_t device, size_t allocated, size_t device_total, size_t device_free)>;
using AllocatorTraceTracker = std::function<void(const TraceEntry&)>;

std::string format_size(uint64_t size);

// The allocator interface NativeCachingAllocator implements: exactly the methods it overrides.
class CUDAAllocator {
 public:
  virtual ~CUDAAllocator() = default;
  virtual DataPtr allocate(size_t n) = 0;
  virtual DeleterFnPtr raw_deleter() const = 0;
  virtual void copy_data(void* dest, const void* src, std::size_t count) const = 0;
  virtual void* raw_alloc(size_t nbytes) = 0;
  virtual void* raw_alloc_with_stream(size_t nbytes, cudaStream_t stream) = 0;
  virtual void raw_delete(void* ptr) = 0;
  virtual void init(int device_count) = 0;
  virtual bool initialized() = 0;
  virtual void setMemoryFraction(double fraction, DeviceIndex device) = 0;
  virtual void emptyCache() = 0;
  virtual void cacheInfo(DeviceIndex device, size_t* largestBlock) = 0;
  virtual void* getBaseAllocation(void* ptr, size_t* size) = 0;
  virtual void recordStream(const DataPtr&, CUDAStream stream) = 0;
  virtual DeviceStats getDeviceStats(DeviceIndex device) = 0;
  virtual void resetAccumulatedStats(DeviceIndex device) = 0;
  virtual void resetPeakStats(DeviceIndex device) = 0;
  virtual SnapshotInfo snapshot() = 0;
  virtual void beginAllocateToPool(DeviceIndex device, MempoolId_t mempool_id,
                                   std::function<bool(cudaStream_t)> filter) = 0;
  virtual void endAllocateToPool(DeviceIndex device, MempoolId_t mempool_id) = 0;
  virtual void releasePool(DeviceIndex device, MempoolId_t mempool_id) = 0;
  virtual bool checkPoolLiveAllocations(DeviceIndex device, MempoolId_t mempool_id,
                                        const std::unordered_set<void*>& expected_live_allocations) = 0;
  virtual ShareableHandle shareIpcHandle(void* ptr) = 0;
  virtual std::shared_ptr<void> getIpcDevPtr(std::string handle) = 0;
  virtual bool isHistoryEnabled() = 0;
  virtual void recordHistory(bool enabled, CreateContextFn context_recorder, size_t alloc_trace_max_entries,
                             RecordContext when) = 0;
  virtual void recordAnnotation(const std::shared_ptr<GatheredContext>& name) = 0;
  virtual void attachOutOfMemoryObserver(OutOfMemoryObserver observer) = 0;
  virtual void attachAllocatorTraceTracker(AllocatorTraceTracker tracker) = 0;
  virtual void enablePeerAccess(DeviceIndex dev, DeviceIndex dev_to_access) = 0;
  virtual cudaError_t memcpyAsync(void* dst, int dstDevice, const void* src, int srcDevice, size_t count,
                                  cudaStream_t stream, bool p2p_enabled) = 0;
  virtual std::shared_ptr<AllocatorState> getCheckpointState(DeviceIndex device, MempoolId_t id) = 0;
  virtual CheckpointDelta setCheckpointPoolState(DeviceIndex device, std::shared_ptr<AllocatorState> pps) = 0;
  virtual std::string name() = 0;
};

extern std::atomic<CUDAAllocator*> allocator;

}  // namespace CUDACachingAllocator
}  // namespace cuda
}  // namespace c10

template <>
struct std::hash<c10::cuda::CUDAStream> {
  size_t operator()(const c10::cuda::CUDAStream& s) const noexcept {
    return std::hash<void*>()(static_cast<void*>(s.stream()));
  }
};

namespace at::cuda {
using c10::cuda::CaptureStatus;
using c10::cuda::CUDAStreamCaptureModeGuard;
using c10::cuda::currentStreamCaptureStatusMayInitCtx;
using c10::cuda::device_count;
}  // namespace at::cuda
