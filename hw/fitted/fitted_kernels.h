#pragma once
// The `kernel_model:` section of a hardware file: kernel time from shape, per class of library kernel, fitted to a
// sweep of measured kernels on one GPU (`dlsim fit-kernels`, validate/calibrate/kernel_fit/). A class's time is
//   t = fixed_us + flop_scale * F + wave_scale * F * q + byte_scale * B [+ channel_scale * B / C * SMs]
//       [+ row_scale * R / SMs] [+ window_scale * W] [+ input_scale * I / SMs] [+ chunk_scale * K]   (µs)
// (a batch-norm backward kernel: channel_bwd_scale in place of channel_scale where the class has one; R a layer
// norm's rows, and a layer-norm backward kernel row_bwd_scale and byte_bwd_scale in place of row_scale and
// byte_scale where the class has them; W a windowed pool's windows' reads over the bandwidth, and a pool's backward
// kernel window_bwd_scale and byte_bwd_scale in place of window_scale and byte_scale where the class has them; I a
// concatenation's idle blocks: of its grid's row per input, those past the input's end, hw/fitted/concat_kernels.h;
// K a multi-tensor kernel's largest chunk's bytes over one SM's share of the bandwidth, bytes * SMs / bandwidth:
// hw/fitted/multi_tensor.h. A shape that stands for several multi-tensor launches pays fixed_us and K once per
// launch)
// with F = flops / the path's peak (the ideal compute time), q >= 1 the wave quantisation of the kernel's tiles
// over the GPU's SMs (hw/fitted/kernel_shape.h: ceil(blocks / SMs) * SMs / blocks), and B = bytes / the HBM
// bandwidth (the ideal memory time). The four coefficients are fitted, never set by hand: 1 / flop_scale is the
// fraction of the peak a kernel reaches once its tiles fill whole waves, 1 / byte_scale the fraction of the
// bandwidth, channel_scale (batch norm only, written where not 0) what a layer of C channels adds where each channel
// is one block, chunk_scale (multi_tensor only, fitted from profiler traces: no sweep measures it) what a launch's
// largest chunk adds where each chunk is one block, fixed_us what a kernel of no work costs where the sweep
// measured it (docs/real-gpu.md says what that includes). A coefficient the fit found no use for is 0.
#include <cstdint>
#include <map>
#include <string>

namespace dlsim {

struct FittedKernelClass {
  double fixed_us = 0;
  double flop_scale = 0;
  double wave_scale = 0;
  double byte_scale = 0;
  int64_t records = 0;  // sweep records it was fitted to (what the file says; not used to price)
  double channel_scale = 0;  // batch norm: times the per-channel term (hw/fitted/kernel_terms.h); 0 elsewhere
  // Batch norm's backward kernel: times its per-channel term, fitted where profiler traces gave backward samples
  // (a sweep measures the forward alone); 0: none, the backward takes channel_scale (kernel_terms.h).
  double channel_bwd_scale = 0;
  // Layer norm: µs per row each SM takes (hw/fitted/kernel_terms.h), forward and backward kernels apart (the
  // backward's fitted where traces gave backward samples; 0: it takes row_scale); 0 elsewhere.
  double row_scale = 0;
  double row_bwd_scale = 0;
  // Layer norm's backward kernels: times their bytes over the bandwidth in place of byte_scale (kernel_terms.h),
  // fitted where traces gave backward samples beside forward ones; 0: byte_scale.
  double byte_bwd_scale = 0;
  // Windowed pools: times their windows' reads over the bandwidth (hw/fitted/kernel_terms.h), forward and backward
  // kernels apart (the backward's 0: it takes window_scale); 0 elsewhere. A pool's backward bytes take
  // byte_bwd_scale as a layer norm's do.
  double window_scale = 0;
  double window_bwd_scale = 0;
  // A concatenation (the concat classes): µs per idle block of its grid each SM schedules (hw/fitted/kernel_terms.h),
  // fitted where profiler traces gave concatenations; 0 elsewhere.
  double input_scale = 0;
  // multi_tensor: times a launch's largest chunk's bytes over one SM's share of the bandwidth (kernel_terms.h); 0
  // elsewhere.
  double chunk_scale = 0;
  bool operator==(const FittedKernelClass&) const = default;
  // Every coefficient times `s` (records kept): the class `s` times slower on every shape.
  FittedKernelClass scaled(double s) const {
    FittedKernelClass c = *this;
    for (double* v : {&c.fixed_us, &c.flop_scale, &c.wave_scale, &c.byte_scale, &c.channel_scale,
                      &c.channel_bwd_scale, &c.row_scale, &c.row_bwd_scale, &c.byte_bwd_scale, &c.window_scale,
                      &c.window_bwd_scale, &c.input_scale, &c.chunk_scale})
      *v *= s;
    return c;
  }
};

struct FittedKernels {
  std::string fitted_from;  // the sweep: file, device, library versions, records (free text)
  std::string timing;       // how the sweep timed its kernels (the sweep's meta; free text)
  // The sweep timed each call with CUDA events around it (PyTorch's default way, and kernels.json's): a short
  // kernel's time then holds the host's dispatch of the op, which the GPU waits for, so the classes' fixed_us are
  // mostly host time. Simulated device time takes the roofline's kernel_fixed_us in their place (the host's share
  // is the eager host model's, hw/eager_host_model.h, which would otherwise count it twice). False for a sweep
  // timed on the device alone (kernel_sweep.py --timing graph).
  bool fixed_includes_dispatch = false;
  double tile = 128;        // output tile side of a tensor-core kernel (blocks per wave)
  double min_split_k = 512; // least part of the reduction one split-K slice handles
  std::map<std::string, FittedKernelClass> classes;  // by class name (hw/fitted/kernel_shape.h)
  bool empty() const { return classes.empty(); }
  bool operator==(const FittedKernels&) const = default;
};

}  // namespace dlsim
