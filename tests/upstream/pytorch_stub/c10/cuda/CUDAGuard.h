#pragma once
// Stand-in for c10/cuda/CUDAGuard.h (upstream replay): one device, nothing to switch.
#include "c10/cuda/CUDACachingAllocator.h"
namespace c10::cuda {
struct CUDAGuard {
  explicit CUDAGuard(DeviceIndex) {}
};
}  // namespace c10::cuda
