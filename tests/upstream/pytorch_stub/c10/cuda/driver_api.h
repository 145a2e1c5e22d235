#pragma once
// Stand-in for c10/cuda/driver_api.h (upstream replay): the CUDA driver's virtual-memory calls that expandable
// segments make, as function pointers like PyTorch's DriverAPI table; pytorch_stub.cc implements them on the
// replay's simulated device (cuMemCreate holds capacity, cuMemMap places it, cuMemUnmap/cuMemRelease give it
// back). Types and constants follow the CUDA driver API's documented names; nothing here is NVIDIA's or
// PyTorch's code. NVML is absent (get_nvml_handle() is null), so out-of-memory reports name no processes.
#include <cstddef>
#include <cstdint>

typedef int CUresult;
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
enum CUmemAllocationType { CU_MEM_ALLOCATION_TYPE_PINNED = 1 };
enum CUmemAllocationHandleType { CU_MEM_HANDLE_TYPE_NONE = 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1 };
enum CUmemLocationType { CU_MEM_LOCATION_TYPE_DEVICE = 1 };
enum CUmemAccess_flags { CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3 };
struct CUmemLocation {
  CUmemLocationType type;
  int id;
};
struct CUmemAllocationProp {
  CUmemAllocationType type;
  CUmemAllocationHandleType requestedHandleTypes;
  CUmemLocation location;
};
struct CUmemAccessDesc {
  CUmemLocation location;
  CUmemAccess_flags flags;
};

typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_DEVICE_PCI_BUS_ID_FMT "%08X:%02X:%02X.0"
typedef struct nvmlDevice_st* nvmlDevice_t;
struct nvmlProcessInfo_v1_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};

namespace c10::cuda {
struct DriverAPI {
  CUresult (*cuMemAddressReserve_)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long);
  CUresult (*cuMemAddressFree_)(CUdeviceptr, size_t);
  CUresult (*cuMemCreate_)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long);
  CUresult (*cuMemRelease_)(CUmemGenericAllocationHandle);
  CUresult (*cuMemMap_)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
  CUresult (*cuMemUnmap_)(CUdeviceptr, size_t);
  CUresult (*cuMemSetAccess_)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t);
  CUresult (*cuMemExportToShareableHandle_)(void*, CUmemGenericAllocationHandle, CUmemAllocationHandleType,
                                            unsigned long long);
  CUresult (*cuMemImportFromShareableHandle_)(CUmemGenericAllocationHandle*, void*, CUmemAllocationHandleType);
  nvmlReturn_t (*nvmlInit_v2_)();
  nvmlReturn_t (*nvmlDeviceGetHandleByPciBusId_v2_)(const char*, nvmlDevice_t*);
  nvmlReturn_t (*nvmlDeviceGetComputeRunningProcesses_)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v1_t*);
  static DriverAPI* get();
  static void* get_nvml_handle() { return nullptr; }
};
}  // namespace c10::cuda
