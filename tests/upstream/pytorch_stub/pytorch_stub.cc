// What the stubs in pytorch_stub/ declare and PyTorch's CUDACachingAllocator.cpp calls: the runtime calls the
// shared cuda_stub does not have, the driver's virtual-memory calls (for expandable segments) on the simulated
// device, the cudaMallocAsync backend's entry point (never chosen), and the allocator settings.
#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <vector>  // before CUDAAllocatorConfig.h, which uses it without including it

#include "c10/cuda/CUDAAllocatorConfig.h"
#include "c10/cuda/CUDACachingAllocator.h"
#include "c10/cuda/driver_api.h"
#include "tests/upstream/cuda_stub/cuda_stub.h"
#include "tests/upstream/pytorch_stub/pytorch_stub.h"

using dlsim::upstream::current_device;
using dlsim::upstream::stub_offset;
using dlsim::upstream::stub_pointer;

namespace {
int g_events = 0;
dlsim::upstream::PytorchStubCalls g_pt_calls;
void forget_handles();
}  // namespace

namespace dlsim::upstream {
const PytorchStubCalls& pytorch_stub_calls() { return g_pt_calls; }
void reset_pytorch_stub(){
  g_pt_calls = {};
  forget_handles();
}
}  // namespace dlsim::upstream

cudaError_t cudaGetLastError() { return cudaSuccess; }

// cudaMemGetInfo's total is the whole device (totalGlobalMem); free is what the simulated device has left.
cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  dlsim::DeviceMemory* d = current_device();
  if (!d) return cudaErrorInvalidValue;
  *total = d->total_global_mem();
  *free = d->capacity() - d->reserved();
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  ++g_pt_calls.device_syncs;
  return cudaSuccess;
}

// Events: the replay records no cross-stream use, so none is ever created; if one were, it completes at once.
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int) {
  *event = reinterpret_cast<cudaEvent_t>(static_cast<uintptr_t>(++g_events));
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t*, void*) { return cudaErrorNotSupported; }
cudaError_t cudaIpcOpenMemHandle(void**, cudaIpcMemHandle_t, unsigned int) { return cudaErrorNotSupported; }
cudaError_t cudaIpcCloseMemHandle(void*) { return cudaErrorNotSupported; }
cudaError_t cudaDeviceEnablePeerAccess(int, unsigned int) { return cudaErrorNotSupported; }
cudaError_t cudaMemcpy(void*, const void*, size_t, cudaMemcpyKind) { return cudaErrorNotSupported; }
cudaError_t cudaMemcpyAsync(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t) {
  return cudaErrorNotSupported;
}
cudaError_t cudaMemcpyPeerAsync(void*, int, const void*, int, size_t, cudaStream_t) { return cudaErrorNotSupported; }

namespace {

// Physical allocations (cuMemCreate) hold capacity from creation; mapping places them in a reserved range of the
// simulated device, which is where the device counts them as reserved. A creation that would exceed the
// capacity fails with CUDA_ERROR_OUT_OF_MEMORY, as the driver's does.
struct Handle {
  size_t size = 0;
  CUdeviceptr mapped_at = 0;  // 0: not mapped
};
std::map<CUmemGenericAllocationHandle, Handle> g_handles;
CUmemGenericAllocationHandle g_next_handle = 1;
uint64_t g_unmapped_handle_bytes = 0;  // created, not (or no longer) mapped

void forget_handles() {
  g_handles.clear();
  g_unmapped_handle_bytes = 0;
}

CUresult address_reserve(CUdeviceptr* ptr, size_t size, size_t, CUdeviceptr, unsigned long long) {
  dlsim::DeviceMemory* d = current_device();
  auto at = d ? d->reserve_address_range(size) : std::nullopt;
  if (!at) return CUDA_ERROR_OUT_OF_MEMORY;
  *ptr = reinterpret_cast<CUdeviceptr>(stub_pointer(*at));
  return CUDA_SUCCESS;
}
CUresult address_free(CUdeviceptr ptr, size_t) {
  current_device()->release_address_range(stub_offset(reinterpret_cast<void*>(ptr)));
  return CUDA_SUCCESS;
}
CUresult mem_create(CUmemGenericAllocationHandle* h, size_t size, const CUmemAllocationProp*, unsigned long long) {
  dlsim::DeviceMemory* d = current_device();
  if (!d || d->reserved() + g_unmapped_handle_bytes + size > d->capacity()) return CUDA_ERROR_OUT_OF_MEMORY;
  ++g_pt_calls.mem_creates;
  g_unmapped_handle_bytes += size;
  *h = g_next_handle++;
  g_handles[*h].size = size;
  return CUDA_SUCCESS;
}
CUresult mem_release(CUmemGenericAllocationHandle h) {
  auto it = g_handles.find(h);
  if (it == g_handles.end() || it->second.mapped_at) return CUDA_ERROR_INVALID_VALUE;
  g_unmapped_handle_bytes -= it->second.size;
  g_handles.erase(it);
  ++g_pt_calls.mem_releases;
  return CUDA_SUCCESS;
}
CUresult mem_map(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h, unsigned long long) {
  auto it = g_handles.find(h);
  if (it == g_handles.end() || it->second.mapped_at || offset != 0 || size != it->second.size)
    return CUDA_ERROR_INVALID_VALUE;
  g_unmapped_handle_bytes -= size;  // the device counts it from here on
  if (!current_device()->map_pages(stub_offset(reinterpret_cast<void*>(ptr)), size))
    throw std::logic_error("pytorch stub: cuMemMap of a created handle found no capacity");
  it->second.mapped_at = ptr;
  return CUDA_SUCCESS;
}
CUresult mem_unmap(CUdeviceptr ptr, size_t size) {
  for (auto& [h, handle] : g_handles)
    if (handle.mapped_at == ptr) {
      if (handle.size != size) return CUDA_ERROR_INVALID_VALUE;
      current_device()->unmap_pages(stub_offset(reinterpret_cast<void*>(ptr)), size);
      handle.mapped_at = 0;
      g_unmapped_handle_bytes += size;  // until cuMemRelease
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_VALUE;
}
CUresult mem_set_access(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t) { return CUDA_SUCCESS; }
CUresult export_handle(void*, CUmemGenericAllocationHandle, CUmemAllocationHandleType, unsigned long long) {
  return CUDA_ERROR_INVALID_VALUE;
}
CUresult import_handle(CUmemGenericAllocationHandle*, void*, CUmemAllocationHandleType) {
  return CUDA_ERROR_INVALID_VALUE;
}

}  // namespace

c10::cuda::DriverAPI* c10::cuda::DriverAPI::get() {
  static DriverAPI api{address_reserve, address_free, mem_create, mem_release, mem_map, mem_unmap, mem_set_access,
                       export_handle,   import_handle, nullptr,   nullptr,     nullptr};
  return &api;
}

namespace c10::cuda::CUDACachingAllocator {

namespace CudaMallocAsync {
CUDAAllocator* allocator() { return nullptr; }  // backend:cudaMallocAsync is never configured in the replay
}  // namespace CudaMallocAsync

// The allocator settings. PyTorch's parser (CUDAAllocatorConfig.cpp) is not built: none of its versions that
// could be read goes with the CUDAAllocatorConfig.h this allocator was written against (tests/upstream/README.md).
// The replay sets the four options it uses through parseArgs with "key:value" pairs, and the power-of-two
// divisions are looked up as PyTorch documents: one value per power-of-two interval from 1 MiB (sizes below
// fall in the first) to 64 GiB (sizes above in the last), 16 intervals.
constexpr size_t kRoundUpPowerOfTwoIntervals = 16;

CUDAAllocatorConfig::CUDAAllocatorConfig()
    : m_max_split_size(std::numeric_limits<size_t>::max()),
      m_garbage_collection_threshold(0),
      m_pinned_num_register_threads(1),
      m_expandable_segments(false),
      m_release_lock_on_cudamalloc(false),
      m_pinned_use_cuda_host_register(false) {
  m_roundup_power2_divisions.assign(kRoundUpPowerOfTwoIntervals, 0);
}

size_t CUDAAllocatorConfig::roundup_power2_divisions(size_t size) {
  const int log_size = 63 - std::countl_zero(static_cast<uint64_t>(size));
  const int index = std::clamp(log_size - 20, 0, static_cast<int>(kRoundUpPowerOfTwoIntervals) - 1);
  return instance().m_roundup_power2_divisions[static_cast<size_t>(index)];
}

void CUDAAllocatorConfig::parseArgs(const char* env) {
  m_max_split_size = std::numeric_limits<size_t>::max();
  m_roundup_power2_divisions.assign(kRoundUpPowerOfTwoIntervals, 0);
  m_garbage_collection_threshold = 0;
  m_expandable_segments = false;
  if (env == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(m_last_allocator_settings_mutex);
    m_last_allocator_settings = env;
  }
  std::istringstream in(env);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto colon = item.find(':');
    TORCH_CHECK(colon != std::string::npos, "allocator setting without a value: ", item);
    const std::string key = item.substr(0, colon), value = item.substr(colon + 1);
    if (key == "max_split_size_mb") {
      m_max_split_size = std::stoull(value) * 1024 * 1024;
    } else if (key == "garbage_collection_threshold") {
      m_garbage_collection_threshold = std::stod(value);
    } else if (key == "roundup_power2_divisions") {
      m_roundup_power2_divisions.assign(kRoundUpPowerOfTwoIntervals, std::stoull(value));
    } else if (key == "expandable_segments") {
      m_expandable_segments = value == "True";
    }
    // Other keys (backend, release_lock_on_cudamalloc, pinned_*) change nothing the replay compares. They can only
    // come from a PYTORCH_CUDA_ALLOC_CONF in the environment, which the first instance() parses; the replay's own
    // parseArgs call then resets every option it uses.
  }
}

}  // namespace c10::cuda::CUDACachingAllocator
