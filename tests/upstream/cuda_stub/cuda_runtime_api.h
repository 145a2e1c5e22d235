#pragma once
// A stand-in for the CUDA runtime API header holding only what NVIDIA's cnmem (src/cnmem.cpp) calls (PyTorch's
// caching allocator needs more: pytorch_stub/cuda_runtime_api.h adds it), so that the
// real cnmem compiles without CUDA and its cudaMalloc/cudaFree land on a simulated device (cuda_stub.cc).
// Declarations follow the CUDA runtime API's documented signatures; nothing here is NVIDIA's code.
#include <cstddef>

#define CUDART_VERSION 12000  // cnmem asks the stream's flags (cudaStreamGetFlags) from 5.5 on

typedef enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorNotSupported = 801,
} cudaError_t;

typedef struct CUstream_st* cudaStream_t;

struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  int pciDomainID;  // PyTorch's out-of-memory report reads these (for NVML, which the replay lacks)
  int pciBusID;
  int pciDeviceID;
};

#define cudaStreamNonBlocking 0x01
#define cudaMemAttachGlobal 0x01

cudaError_t cudaMalloc(void** ptr, size_t size);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned int flags = cudaMemAttachGlobal);
cudaError_t cudaMemPrefetchAsync(const void* ptr, size_t count, int device, cudaStream_t stream = 0);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int* flags);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
const char* cudaGetErrorString(cudaError_t error);
