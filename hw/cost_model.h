#pragma once
// How long work takes on the modelled hardware.
#include <cstdint>

#include "hw/gpu_spec.h"
#include "workloads/graph.h"

namespace dlsim {

struct KernelCost {
  TimeNs duration_ns = 0;   // standalone, the GPU to itself
  double sm_fraction = 1.0; // share of the SMs the kernel can occupy (1 = it fills the GPU)
};

class KernelCostModel {
 public:
  virtual ~KernelCostModel() = default;
  virtual KernelCost cost(const Graph& g, const Op& op) const = 0;
};

enum class CopyDir : uint8_t { HostToDevice, DeviceToHost };

class TransferModel {
 public:
  virtual ~TransferModel() = default;
  // Time for one transfer alone on its link.
  virtual TimeNs copy_time(CopyDir dir, uint64_t bytes, bool pinned) const = 0;
  virtual double bandwidth(CopyDir dir, bool pinned) const = 0;  // bytes/s
  virtual TimeNs latency(CopyDir dir) const = 0;
};

}  // namespace dlsim
