#include "tests/upstream/cuda_stub/cuda_stub.h"

#include <cstring>
#include <stdexcept>

#include "tests/upstream/cuda_stub/cuda_runtime_api.h"

namespace dlsim::upstream {
namespace {
DeviceMemory* g_device = nullptr;
StubRuntimeCalls g_calls;
}  // namespace

void use_device(DeviceMemory* device) {
  g_device = device;
  g_calls = {};
}
const StubRuntimeCalls& stub_calls() { return g_calls; }
DeviceMemory* current_device() { return g_device; }

}  // namespace dlsim::upstream

using dlsim::upstream::g_calls;
using dlsim::upstream::g_device;

cudaError_t cudaMalloc(void** ptr, size_t size) {
  ++g_calls.malloc_calls;
  std::optional<dlsim::DevPtr> p;
  if (g_device) p = g_device->malloc(size);
  if (!p) {
    ++g_calls.failed_mallocs;
    *ptr = nullptr;
    return cudaErrorMemoryAllocation;
  }
  *ptr = dlsim::upstream::stub_pointer(*p);
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  ++g_calls.free_calls;
  if (ptr == nullptr) return cudaSuccess;
  if (!g_device) return cudaErrorInvalidValue;
  try {
    g_device->free(dlsim::upstream::stub_offset(ptr));
  } catch (const std::logic_error&) {  // not a pointer cudaMalloc returned: CUDA refuses it the same way
    ++g_calls.invalid_frees;
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

cudaError_t cudaMallocManaged(void** ptr, size_t, unsigned int) {
  ++g_calls.unsupported_calls;
  *ptr = nullptr;
  return cudaErrorNotSupported;
}

cudaError_t cudaMemPrefetchAsync(const void*, size_t, int, cudaStream_t) {
  ++g_calls.unsupported_calls;
  return cudaErrorNotSupported;
}

cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : cudaErrorInvalidValue; }

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (device != 0 || !g_device) return cudaErrorInvalidValue;
  std::memset(prop, 0, sizeof(*prop));
  std::strncpy(prop->name, "dlsim simulated device", sizeof(prop->name) - 1);
  prop->totalGlobalMem = g_device->total_global_mem();
  return cudaSuccess;
}

// dlsim models non-blocking streams (cudaStreamNonBlocking), as frameworks create theirs.
cudaError_t cudaStreamGetFlags(cudaStream_t, unsigned int* flags) {
  *flags = cudaStreamNonBlocking;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t) {
  ++g_calls.stream_syncs;
  return cudaSuccess;
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorNotSupported: return "operation not supported (stub)";
  }
  return "unknown error";
}
