#pragma once
// How long work takes on the modelled hardware: the kernel cost models (chosen by name, `kernel_model:` in the
// hardware file) and the host link's transfer model.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/registry.h"
#include "hw/gpu_spec.h"
#include "workloads/graph.h"

namespace dlsim {

struct KernelCost {
  TimeNs duration_ns = 0;   // standalone, the GPU to itself
  double sm_fraction = 1.0; // share of the SMs the kernel can occupy (1 = it fills the GPU)
  // The grid (sim/device_model.h dispatches it): thread blocks, and how many of them one SM holds at once. The
  // kernel runs in ceil(blocks / (SMs * blocks_per_sm)) waves of equal length. blocks = 0: not known; the
  // device takes round(sm_fraction * SMs) blocks, one per SM: a single wave over sm_fraction of the GPU.
  int64_t blocks = 0;
  int blocks_per_sm = 1;
};

// One implementation (a cuDNN algorithm, a tile configuration) an op can run with. Variant 0 is cost()'s kernel.
struct KernelVariant {
  std::string name;
  KernelCost cost;
  uint64_t workspace_bytes = 0;  // scratch it needs (variant 0: the op's workspace tensor, if any)
};

class KernelCostModel {
 public:
  virtual ~KernelCostModel() = default;
  virtual KernelCost cost(const Graph& g, const Op& op) const = 0;
  // Every kernel the op can run with, variant 0 first (= cost()). The default (hw/kernel_variants.cc) gives
  // every convolution (forward, backward-data, backward-filter) two more, derived from variant 0: a kernel with
  // half the thread blocks ("small-grid") and one that needs no workspace ("implicit-gemm"), each slower alone;
  // every other op has only variant 0. Concurrency policies that choose kernels under co-execution read this.
  virtual std::vector<KernelVariant> variants(const Graph& g, const Op& op) const;
  // Model-specific figures about a graph for `run --json` (the table: how many ops it has measured). May be empty.
  virtual nlohmann::json report(const Graph& /*g*/) const { return nlohmann::json::object(); }
};

// Every built-in kernel cost model (`roofline`, `table`), registered in a fixed order
// (hw/builtin_kernel_models.cc). A model's parameters are the `roofline:` block of the hardware file.
using KernelModelRegistry = Registry<KernelCostModel, const GpuSpec&>;
const KernelModelRegistry& kernel_model_registry();

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
