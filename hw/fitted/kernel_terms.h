#pragma once
// Pricing one kernel shape with a fitted class (hw/fitted/fitted_kernels.h gives the formula).
#include <string>

#include "hw/fitted/fitted_kernels.h"
#include "hw/fitted/kernel_shape.h"
#include "hw/gpu_spec.h"

namespace dlsim {

// The ideal times a class's coefficients multiply (microseconds), for one kernel shape on one GPU.
struct KernelTerms {
  double flop_us = 0;    // flops / the path's peak
  double wave = 1;       // q, the wave quantisation factor
  double byte_us = 0;    // bytes / the HBM bandwidth
  // Batch norm: one channel's bytes over one SM's share of the bandwidth (bytes / channels * SMs / bandwidth), the
  // time where each channel is one block on one SM; 0 without channels.
  double channel_us = 0;
  // The same for a batch-norm backward kernel (KernelShape::backward), which has its own coefficient; exactly one
  // of the two is non-zero for a batch norm with channels.
  double channel_bwd_us = 0;
  // Layer norm: its rows over the SMs (KernelShape::rows / SMs), the rows each SM takes one block at a time; the
  // class's row_scale is the µs one row adds there. Forward and backward kernels apart, as the channel terms.
  double row_us = 0;
  double row_bwd_us = 0;
  // A layer-norm backward kernel's bytes over the bandwidth, in place of byte_us: its two kernels (the per-row input
  // gradient and GammaBeta's column reduction) stream at a rate of their own (about 1.1 TB/s on the H200's traces,
  // the forward's 2-2.8), which the class's byte_bwd_scale takes.
  double byte_bwd_us = 0;
  // A windowed pool's windows' reads over the bandwidth (KernelShape::window_bytes), forward and backward kernels
  // apart; a pool's backward bytes are in byte_bwd_us, as a layer norm's.
  double window_us = 0;
  double window_bwd_us = 0;
  // A concatenation: its grid's idle blocks over the SMs (KernelShape::idle_blocks: of its inputs' rows, the blocks
  // past each input's end), the blocks each SM schedules that move no data; the class's input_scale is the µs one
  // adds there.
  double input_us = 0;
  // A multi-tensor kernel: the launches the shape stands for (KernelShape::launches; 1 for every other kernel),
  // each of which pays the class's fixed_us, and the sum of their largest chunks' bytes over one SM's share of the
  // bandwidth (KernelShape::chunk_bytes * SMs / bandwidth), which chunk_scale multiplies.
  double launches = 1;
  double chunk_us = 0;
};
// `spec` gives the peaks, the bandwidth and the SMs; `fitted` the tile settings. A path the GPU has no peak for
// has no compute term (0).
KernelTerms kernel_terms(const KernelShape& s, const GpuSpec& spec, const FittedKernels& fitted);
double class_time_us(const FittedKernelClass& c, const KernelTerms& t);
// The coefficient of a backward kernel's per-channel term: channel_bwd_scale, or channel_scale where the class has
// none (a sweep measures batch norm forward only: a GPU fitted from its sweep alone prices the backward's channels
// as the forward's).
double channel_bwd_coefficient(const FittedKernelClass& c);
// The same for layer norm's per-row term: row_bwd_scale, or row_scale where the class has none.
double row_bwd_coefficient(const FittedKernelClass& c);
// And for a layer-norm or pool backward's bytes: byte_bwd_scale, or byte_scale where the class has none.
double byte_bwd_coefficient(const FittedKernelClass& c);
// And for a pool backward's windows: window_bwd_scale, or window_scale where the class has none.
double window_bwd_coefficient(const FittedKernelClass& c);
// The kernel's time on the device alone: class_time_us, with `device_fixed_us` in place of the class's fixed cost
// where the sweep's timings held the host's dispatch (FittedKernels::fixed_includes_dispatch).
double device_time_us(const FittedKernels& f, const FittedKernelClass& c, const KernelTerms& t, double device_fixed_us);

// The class that prices the shape (the first of class_candidates present in `fitted`), or null.
const FittedKernelClass* find_class(const FittedKernels& fitted, const KernelShape& s, std::string* name = nullptr);

}  // namespace dlsim
