#pragma once
// Fits the hardware file's concurrency constants (concurrent_kernels.co_run_slowdown and gemm_blocks_per_sm,
// hw/gpu_spec.h) to the measured concurrent convolutions of micro.json: n identical 3x3 convolutions, one per
// stream, against the same on one stream. Each is simulated on the device model (sim/concurrent_kernels.h) as
// n kernels of the measured standalone time with the grid the roofline gives the convolution, and the
// constants chosen minimise the squared log error of the simulated speed-up (n x standalone over the
// makespan) against the measured one (serial over parallel): every blocks-per-SM value from 1 to 4, and the
// slowdown from 0 to 2 in steps of 0.001.
#include <string>
#include <vector>

#include "hw/gpu_spec.h"
#include "validate/gpu/microbench_records.h"

namespace dlsim {

struct ConcurrencyRegression {
  double co_run_slowdown = 0;
  int gemm_blocks_per_sm = 1;
  struct Point {
    int convs = 0;
    std::string shape;
    int64_t blocks = 0;            // the convolution's grid
    double measured_speedup = 0;   // serial_ns / parallel_ns
    double simulated_speedup = 0;  // with the fitted constants
  };
  std::vector<Point> points;
  double rms_log_error = 0;  // sqrt(mean of log(simulated / measured)^2)
};

// Throws ConfigError(file) when a shape cannot be read ("n32 c256 h14 w14 k256 r3 fp32") or a time is not
// positive. No samples: nullopt-like empty fit (points empty) and the spec's values.
ConcurrencyRegression regress_concurrency(const MicrobenchResults& r, const GpuSpec& spec, const std::string& file);

// The simulated speed-up of `convs` copies of one convolution with `spec` (what the fit compares).
double simulated_conv_speedup(const GpuSpec& spec, const ConcurrencySample& s, const std::string& file,
                              int64_t* blocks = nullptr);

}  // namespace dlsim
