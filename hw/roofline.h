#pragma once
// `roofline`, the default kernel cost model: an op takes as long as the slower of its arithmetic at the
// achievable peak rate and its memory traffic at the achievable HBM bandwidth, plus a fixed cost per kernel.
// Its parameters are the `roofline:` block of the hardware file (RooflineOptions::specs()).
#include <vector>

#include "hw/cost_model.h"
#include "hw/gpu_spec.h"
#include "workloads/graph.h"

namespace dlsim {

// The model's constants in its own units. Each is declared once, with its default and range, in specs(): the
// efficiencies and the fixed cost come from the hardware file; the tile sizes are assumptions about the
// libraries' kernels (see sm_fraction below) that a file may override. The defaults here are those of specs()
// converted (roofline_test.cc checks that they agree).
struct RooflineOptions {
  double compute_efficiency = 0.6;          // achieved fraction of the peak FLOP/s
  double memory_efficiency = 0.8;           // achieved fraction of the peak HBM bandwidth
  TimeNs kernel_fixed_ns = 2000;            // least device time of any kernel
  double tensor_tile_elems = 128.0 * 128.0; // output elements per block of a tensor-core GEMM/conv kernel
  double min_split_k = 512.0;               // the least part of the reduction one split-K slice handles
  double elementwise_block_elems = 512.0;   // output elements per block of an elementwise kernel

  static std::vector<ParamSpec> specs();
  static RooflineOptions from_params(const Params& p);  // unit conversion (µs to ns) of checked Params
  bool operator==(const RooflineOptions&) const = default;
};

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

class RooflineCostModel : public KernelCostModel {
 public:
  explicit RooflineCostModel(GpuSpec spec, RooflineOptions options = {})
      : spec_(std::move(spec)), options_(options) {}

  // duration = max(flops / (peak * compute_efficiency), bytes / (hbm_bandwidth * memory_efficiency))
  //            + kernel_fixed_ns,
  // where bytes = bytes_read + bytes_written. The peak is not scaled down by sm_fraction: libraries pick
  // smaller tiles or split-K for small problems, and such kernels are dominated by the fixed cost anyway.
  // An op with neither flops nor bytes (a view such as Reshape or Flatten) launches no kernel: 0 ns.
  // With a calibrated op_class_scale for the op's kind, the duration is multiplied by it.
  KernelCost cost(const Graph& g, const Op& op) const override;

  // The share of the SMs an op can occupy on its own, from how many thread blocks it launches:
  // - tensor-core ops: one block per tile of tensor_tile_elems output elements (128x128, the usual
  //   cuBLAS/cuDNN/CUTLASS tile; an assumption), and the library splits the reduction dimension K (split-K, at
  //   least min_split_k of K per split) only as far as needed to give every SM a block. So a weight-gradient
  //   convolution with a tiny output but a huge N*H*W reduction still fills the GPU, while a batch-32
  //   classifier layer does not.
  // - other ops: one block per elementwise_block_elems output elements (PyTorch's elementwise kernels: 128
  //   threads x 4 elements; recalled, not checked against the source).
  // sm_fraction = min(1, blocks / SMs), and at least one SM.
  double sm_fraction(const Graph& g, const Op& op) const;

  const GpuSpec& spec() const { return spec_; }
  const RooflineOptions& options() const { return options_; }

 private:
  GpuSpec spec_;  // a copy: the model must not dangle when the Hardware that owns the spec moves
  RooflineOptions options_;
};

void register_roofline(KernelModelRegistry& r);

}  // namespace dlsim
