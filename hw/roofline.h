#pragma once
// The roofline kernel cost model: an op takes as long as the slower of its arithmetic at the achievable peak
// rate and its memory traffic at the achievable HBM bandwidth, plus a fixed cost per kernel.
#include "hw/cost_model.h"
#include "hw/gpu_spec.h"
#include "workloads/graph.h"

namespace dlsim {

// Convolutions and matrix products (forward and backward) run on tensor cores; everything else on CUDA cores.
bool runs_on_tensor_cores(OpKind k);

// The data type an op computes in: its first floating-point input, else its first floating-point output,
// else F32 (under mixed precision a bf16 activation makes a conv/matmul a bf16 kernel).
DType compute_dtype(const Graph& g, const Op& op);

// The FLOP/s peak an op can reach (before the efficiency factor):
// - tensor-core ops in BF16/F16: the dense tensor-core rate of that type;
// - convolutions in F32: the TF32 tensor-core rate, because PyTorch lets cuDNN use TF32 for convolutions by
//   default (torch.backends.cudnn.allow_tf32 = True);
// - matmul/linear in F32: the CUDA-core FP32 rate, because PyTorch keeps TF32 off for matmuls by default
//   (torch.backends.cuda.matmul.allow_tf32 = False since 1.12);
// - every other op: the CUDA-core FP32 rate (PyTorch's elementwise and reduction kernels do their arithmetic
//   in float even for bf16/fp16 tensors).
double compute_peak(const GpuSpec& spec, const Graph& g, const Op& op);

// The share of the SMs an op can occupy on its own, from how many thread blocks it launches:
// - tensor-core ops: one block per 128x128 tile of the output (the usual cuBLAS/cuDNN/CUTLASS tile; an
//   assumption), and the library splits the reduction dimension K (split-K, at least 512 of K per split) only
//   as far as needed to give every SM a block. So a weight-gradient convolution with a tiny output but a huge
//   N*H*W reduction still fills the GPU, while a batch-32 classifier layer does not.
// - other ops: one block per 512 output elements (PyTorch's elementwise kernels: 128 threads x 4 elements;
//   recalled, not checked against the source).
// sm_fraction = min(1, blocks / SMs), and at least one SM.
double sm_fraction(const GpuSpec& spec, const Graph& g, const Op& op);

class RooflineCostModel : public KernelCostModel {
 public:
  explicit RooflineCostModel(GpuSpec spec) : spec_(std::move(spec)) {}

  // duration = max(flops / (peak * compute_efficiency), bytes / (hbm_bandwidth * memory_efficiency))
  //            + kernel_fixed_ns,
  // where bytes = bytes_read + bytes_written. The peak is not scaled down by sm_fraction: libraries pick
  // smaller tiles or split-K for small problems, and such kernels are dominated by the fixed cost anyway.
  // An op with neither flops nor bytes (a view such as Reshape or Flatten) launches no kernel: 0 ns.
  // With a calibrated op_class_scale for the op's kind, the duration is multiplied by it.
  KernelCost cost(const Graph& g, const Op& op) const override;

  const GpuSpec& spec() const { return spec_; }

 private:
  GpuSpec spec_;  // a copy: the model must not dangle when the Hardware that owns the spec moves
};

}  // namespace dlsim
