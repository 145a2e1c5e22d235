#pragma once
// The optimizer's foreach passes priced as the kernels PyTorch launches: each torch._foreach_* op is
// multi_tensor_apply's launches over its tensor lists (workloads/multi_tensor_apply.h gives which), and each launch
// is priced by the fitted class multi_tensor.<dtype> (hw/fitted/fitted_kernels.h) as
//   t = fixed_us + byte_scale * B + chunk_scale * K   (µs)
// with B the launch's bytes (its elements times the bytes an element moves over every list, read and written) over
// the HBM bandwidth, and K its largest chunk's bytes over one SM's share of the bandwidth (bytes * SMs / bandwidth):
// each 65,536-element chunk is one thread block, so a launch lasts at least as long as its largest chunk on one SM,
// as batch norm's per-channel term has one block per channel. Fitted on the H200's twenty CNN steps' 345 launches
// (results/fidelity/membound-kernels.md) this predicts each model's optimizer time left out at 5.7 %; a contiguous
// elementwise kernel per op is 44 % short. The class comes from profiler traces (`dlsim fit-kernels --trace`): a
// sweep measures no such kernel, and where a file has no class these ops are priced as before (the zoo's update by
// the roofline, a recorded foreach op as one elementwise kernel).
#include <cstdint>
#include <vector>

#include "hw/fitted/fitted_kernels.h"
#include "hw/fitted/kernel_shape.h"
#include "hw/gpu_spec.h"

namespace dlsim {

// One pass's launches as kernel shapes, one per launch (launches 1): `numels` one list's tensors, `lists` the
// tensor lists the op runs over (its depth: an in-place op's self list counts once), `bytes_per_element` the bytes
// one element moves over every list (a fp32 _foreach_add_(a, b): 12, a and b read, a written). What a trace's
// multi_tensor_apply_kernel launches are matched to, in order, when the class is fitted.
std::vector<KernelShape> multi_tensor_pass_shapes(const std::vector<int64_t>& numels, int lists, DType dtype,
                                                  int64_t bytes_per_element);
// The pass's time with class `c`: the sum of its launches' times (µs).
double multi_tensor_pass_us(const FittedKernelClass& c, const GpuSpec& spec, const FittedKernels& fitted,
                            const std::vector<int64_t>& numels, int lists, DType dtype, int64_t bytes_per_element);
// The shape of an op charged with some launches of a pass (workloads/multi_tensor_apply.h's multi_tensor_charges:
// attributes launches, chunk_bytes and foreach_bytes): its bytes, the launches it pays the fixed cost of and their
// largest chunks' bytes. An op that closes no launch has its bytes alone, so the ops of a pass sum to its launches.
KernelShape multi_tensor_charged_shape(DType dtype, double bytes, double launches, double chunk_bytes);

}  // namespace dlsim
