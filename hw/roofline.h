#pragma once
// `roofline`, the default kernel cost model: an op takes as long as the slower of its arithmetic at the
// achievable peak rate and its memory traffic at the achievable HBM bandwidth, plus a fixed cost per kernel.
// Its parameters are the `roofline:` block of the hardware file (RooflineOptions::parameters()).
#include <vector>

#include "hw/class_efficiency.h"
#include "hw/cost_model.h"
#include "hw/gpu_spec.h"
#include "hw/math_path.h"
#include "workloads/graph.h"

namespace dlsim {

// The model's constants in its own units, each default written here once; parameters() binds the parameters to
// them (common/param_binding.h). The efficiencies and the fixed cost come from the hardware file; the tile sizes
// are assumptions about the libraries' kernels (see sm_fraction below) that a file may override.
struct RooflineOptions {
  double compute_efficiency = 0.6;          // achieved fraction of the peak FLOP/s
  double memory_efficiency = 0.8;           // achieved fraction of the peak HBM bandwidth
  TimeNs kernel_fixed_ns = 2000;            // least device time of any kernel
  double tensor_tile_elems = 128.0 * 128.0; // output elements per block of a tensor-core GEMM/conv kernel
  double min_split_k = 512.0;               // the least part of the reduction one split-K slice handles
  double elementwise_block_elems = 512.0;   // output elements per block of an elementwise kernel
  // Per op class and math path (hw/class_efficiency.h); unset ones fall back to the two efficiencies above.
  ClassEfficiencies classes;
  // Whether a kernel that fills only part of the GPU (sm_fraction < 1) reaches only that part of the rates.
  bool occupancy_scaling = false;

  static const ParamBindings<RooflineOptions>& parameters();  // kernel_fixed_us sets kernel_fixed_ns
  bool operator==(const RooflineOptions&) const = default;
};

// Convolutions and matrix products (forward and backward) can run on tensor cores (hw/math_path.h's is_matrix_op).
bool runs_on_tensor_cores(OpKind k);

// Thread blocks of a tensor-core GEMM or implicit-GEMM convolution with `out_elems` output elements and a
// reduction of length `k`: one per tile of tile_elems outputs, times the split-K slices (at least min_split_k of
// the reduction each) needed to give every one of `sms` SMs a block.
int64_t tensor_core_blocks(double out_elems, double k, int sms, double tile_elems, double min_split_k);

// The FLOP/s peak an op can reach (before the efficiency factor): that of its math path on this GPU
// (hw/math_path.h: 16-bit tensor cores, TF32 where allowed — by default for convolutions, not for matmuls, as
// PyTorch — else the CUDA-core fp32 rate, which every non-matrix op gets).
double compute_peak(const GpuSpec& spec, const Graph& g, const Op& op);

// Whether `op` is an Adam update run as torch.optim's foreach passes (attr foreach, workloads/training_options.h):
// not the one fused kernel per update that the GPU harness runs, so no calibration of the harness measured it.
bool is_foreach_update(const Op& op);

class RooflineCostModel : public KernelCostModel {
 public:
  explicit RooflineCostModel(GpuSpec spec, RooflineOptions options = {})
      : spec_(std::move(spec)), options_(options) {}

  // duration = max(flops / (peak * compute_efficiency), bytes / (hbm_bandwidth * memory_efficiency))
  //            + kernel_fixed_ns,
  // where bytes = bytes_read + bytes_written and the efficiencies are the op class's (options().classes) where
  // set. By default the rates are not scaled down by sm_fraction: libraries pick smaller tiles or split-K for
  // small problems, and such kernels are dominated by the fixed cost anyway. With occupancy_scaling both rates
  // are multiplied by sm_fraction: a batch-32 classifier GEMM that fills a quarter of the SMs reaches a quarter
  // of the rate (the size dependence the H100 calibration found between CNN classifiers and BERT's GEMMs).
  // An op with neither flops nor bytes (a view such as Reshape or Flatten) launches no kernel: 0 ns.
  // With a calibrated op_class_scale for the op's kind, measured on the GPU on the op's math path (a
  // convolution or matmul kind names it in op_class_scale_path), the duration is that of the single-efficiency
  // roofline (compute_efficiency, memory_efficiency, no occupancy scaling: what the factor was fitted against)
  // times the factor: measured first. The per-class efficiencies serve what no calibration run measured,
  // among them a foreach Adam update (is_foreach_update): its factor is the harness's fused kernel's.
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
  // The same thread blocks as a grid: how many, and how many one SM holds (the hardware file's
  // concurrent_kernels.gemm_blocks_per_sm for tensor-core tiles, elementwise_blocks_per_sm for the rest).
  struct Grid {
    int64_t blocks = 1;
    int blocks_per_sm = 1;
  };
  Grid grid(const Graph& g, const Op& op) const;

  const GpuSpec& spec() const { return spec_; }
  const RooflineOptions& options() const { return options_; }

 private:
  GpuSpec spec_;  // a copy: the model must not dangle when the Hardware that owns the spec moves
  RooflineOptions options_;
};

void register_roofline(KernelModelRegistry& r);

}  // namespace dlsim
