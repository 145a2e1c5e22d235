#include "hw/roofline.h"

#include <algorithm>
#include <cmath>

#include "common/sim_time.h"
#include "hw/collective_op.h"

namespace dlsim {

const ParamBindings<RooflineOptions>& RooflineOptions::parameters() {
  using O = RooflineOptions;
  static const auto b = ParamBindings<O>()
      .add("compute_efficiency", &O::compute_efficiency, "achieved fraction of the peak FLOP/s",
           ParamCheck::above_up_to(0, 1))
      .add("memory_efficiency", &O::memory_efficiency, "achieved fraction of the peak HBM bandwidth",
           ParamCheck::above_up_to(0, 1))
      .add("kernel_fixed_us", &O::kernel_fixed_ns, microseconds_to_ns(),
           "least device time of any kernel (ramp-up and tail of a grid)", ParamCheck::in_range(0, kMaxDurationUs))
      .add("tensor_tile_elems", &O::tensor_tile_elems, integer_as_double(),
           "output elements per thread block of a tensor-core GEMM/conv kernel (a 128x128 tile)",
           ParamCheck::at_least(1))
      .add("min_split_k", &O::min_split_k, integer_as_double(),
           "least part of the reduction dimension one split-K slice handles", ParamCheck::at_least(1))
      .add("elementwise_block_elems", &O::elementwise_block_elems, integer_as_double(),
           "output elements per thread block of an elementwise kernel (128 threads x 4 elements)",
           ParamCheck::at_least(1))
      .add("occupancy_scaling", &O::occupancy_scaling,
           "scale a kernel's compute and memory rates by the share of the SMs it fills (sm_fraction)")
      .add_all(&O::classes, ClassEfficiencies::parameters());
  return b;
}

namespace {

// Elements of the op's first output (its first input when it writes nothing), 1 when it touches no tensor.
double output_elements(const Graph& g, const Op& op) {
  for (TensorId id : op.outputs)
    if (id != kNoTensor) return static_cast<double>(numel(g.tensor(id).shape));
  for (TensorId id : op.inputs)
    if (id != kNoTensor) return static_cast<double>(numel(g.tensor(id).shape));
  return 1;
}

}  // namespace

bool runs_on_tensor_cores(OpKind k) { return is_matrix_op(k); }

double compute_peak(const GpuSpec& spec, const Graph& g, const Op& op) {
  return path_peak(spec, math_path(spec, g, op));
}

int64_t tensor_core_blocks(double out_elems, double k, int sms, double tile_elems, double min_split_k) {
  const double tiles = std::ceil(out_elems / tile_elems);
  const double max_splits = std::max(1.0, std::floor(k / min_split_k));
  const double wanted_splits = std::max(1.0, std::ceil(static_cast<double>(std::max(sms, 1)) / tiles));
  return static_cast<int64_t>(std::max(1.0, tiles * std::min(max_splits, wanted_splits)));
}

RooflineCostModel::Grid RooflineCostModel::grid(const Graph& g, const Op& op) const {
  const double out = output_elements(g, op);
  Grid r;
  if (runs_on_tensor_cores(op.kind)) {
    const double k = op.flops > 0 ? op.flops / (2.0 * out) : 1.0;  // reduction length: flops = 2 * out * K
    r.blocks = tensor_core_blocks(out, k, spec_.sms, options_.tensor_tile_elems, options_.min_split_k);
    r.blocks_per_sm = spec_.concurrency.gemm_blocks_per_sm;
  } else {
    r.blocks = static_cast<int64_t>(std::max(1.0, std::ceil(out / options_.elementwise_block_elems)));
    r.blocks_per_sm = spec_.concurrency.elementwise_blocks_per_sm;
  }
  return r;
}

double RooflineCostModel::sm_fraction(const Graph& g, const Op& op) const {
  const double sms = static_cast<double>(std::max(spec_.sms, 1));
  return std::clamp(static_cast<double>(grid(g, op).blocks) / sms, 1.0 / sms, 1.0);
}

bool is_foreach_update(const Op& op) { return op.kind == OpKind::AdamUpdate && op.attr(Attr::foreach) != 0; }

KernelCost RooflineCostModel::cost(const Graph& g, const Op& op) const {
  // A collective is priced by the interconnect, not by a kernel model (hw/collective_op.h).
  if (is_collective(op.kind)) return collective_kernel_cost(spec_, op);
  KernelCost c;
  c.sm_fraction = sm_fraction(g, op);
  const Grid gr = grid(g, op);
  c.blocks = gr.blocks;
  c.blocks_per_sm = gr.blocks_per_sm;
  const double bytes = static_cast<double>(op.bytes_read) + static_cast<double>(op.bytes_written);
  if (op.flops <= 0 && bytes <= 0) {
    c.duration_ns = 0;
    return c;
  }
  const MathPath path = math_path(spec_, g, op);
  const OpClass cls = op_class(op);
  // A kind the calibration measured on this GPU (op_class_scale), on the math path it was measured on, takes the
  // single-efficiency roofline its factor was fitted against (validate/calibrate/calibrate.h: no class efficiencies, no
  // occupancy scaling) times that factor; everything else the per-class model.
  const auto measured = spec_.op_class_scale.find(op.kind);
  const auto measured_path = spec_.op_class_scale_path.find(op.kind);
  const bool per_class = measured == spec_.op_class_scale.end() ||
                         (measured_path != spec_.op_class_scale_path.end() && measured_path->second != path) ||
                         is_foreach_update(op);
  const double share = options_.occupancy_scaling && per_class ? c.sm_fraction : 1.0;
  const double ce = per_class ? options_.classes.compute_for(cls, path, options_.compute_efficiency)
                              : options_.compute_efficiency;
  const double me = per_class ? options_.classes.memory_for(cls, options_.memory_efficiency) : options_.memory_efficiency;
  const double compute_s = op.flops / (path_peak(spec_, path) * ce * share);
  const double memory_s = bytes / (spec_.hbm_bandwidth * me * share);
  // Checked conversions (common/sim_time.h): a tiny rate in the file makes a duration no integer clock holds,
  // and the error names the rate that did it.
  const std::string what = "kernel '" + op.name + "'";
  c.duration_ns = checked_duration_ns(std::max(compute_s, memory_s) * 1e9, spec_.file,
                                      compute_s >= memory_s ? "peak_tflops" : "hbm_bandwidth_gb_per_s", what) +
                  options_.kernel_fixed_ns;
  if (!per_class)
    c.duration_ns = std::max<TimeNs>(1, checked_duration_ns(static_cast<double>(c.duration_ns) * measured->second,
                                                            spec_.file, "roofline.op_class_scale", what));
  return c;
}

void register_roofline(KernelModelRegistry& r) {
  r.add({"roofline",
         "max(FLOPs at peak x compute_efficiency, bytes at HBM bandwidth x memory_efficiency) + a fixed cost per "
         "kernel; SM share from the kernel's thread blocks",
         RooflineOptions::parameters().specs(), [](const Params& p, const GpuSpec& spec) -> std::unique_ptr<KernelCostModel> {
           return std::make_unique<RooflineCostModel>(spec, RooflineOptions::parameters().from_params(p));
         }});
}

}  // namespace dlsim
