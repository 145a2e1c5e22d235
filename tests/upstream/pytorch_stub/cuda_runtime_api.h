#pragma once
// The stub CUDA runtime (cuda_stub/) plus what PyTorch's CUDACachingAllocator.cpp also calls: events, memory
// info, device synchronization, IPC and copies. Declarations follow the CUDA runtime API's documented
// signatures; nothing here is NVIDIA's code. pytorch_stub.cc defines them: events complete at once (the replay
// has no cross-stream uses), cudaMemGetInfo reports the simulated device, IPC and copies are refused.
#include "tests/upstream/cuda_stub/cuda_runtime_api.h"

typedef struct CUevent_st* cudaEvent_t;
#define cudaEventDisableTiming 0x02
constexpr cudaError_t cudaErrorNotReady = static_cast<cudaError_t>(600);
constexpr cudaError_t cudaErrorPeerAccessAlreadyEnabled = static_cast<cudaError_t>(704);

enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1,
                             cudaStreamCaptureModeRelaxed = 2 };
enum cudaMemcpyKind { cudaMemcpyDeviceToDevice = 3 };
#define CUDA_IPC_HANDLE_SIZE 64
struct cudaIpcMemHandle_t {
  char reserved[CUDA_IPC_HANDLE_SIZE];
};
#define cudaIpcMemLazyEnablePeerAccess 0x01

cudaError_t cudaGetLastError();
cudaError_t cudaMemGetInfo(size_t* free, size_t* total);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* ptr);
cudaError_t cudaIpcOpenMemHandle(void** ptr, cudaIpcMemHandle_t handle, unsigned int flags);
cudaError_t cudaIpcCloseMemHandle(void* ptr);
cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice, size_t count,
                                cudaStream_t stream);
