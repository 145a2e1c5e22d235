#pragma once
// Stand-in for c10/core/impl/GPUTrace.h (upstream replay): no Python tracer is ever attached.
#include <cstdint>
#include "c10/cuda/CUDACachingAllocator.h"
namespace c10::impl {
struct PyInterpreterVTable {
  void trace_gpu_memory_allocation(DeviceType, uintptr_t) const {}
  void trace_gpu_memory_deallocation(DeviceType, uintptr_t) const {}
};
struct PyInterpreter {
  const PyInterpreterVTable* operator->() const { return &vtable; }
  PyInterpreterVTable vtable;
};
struct GPUTrace {
  static const PyInterpreter* get_trace() { return nullptr; }
};
}  // namespace c10::impl
