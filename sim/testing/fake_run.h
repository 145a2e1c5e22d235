#pragma once
// Runs a Program on policies/testing/fakes.h's stand-ins: a 1 GiB device, a pool that hands freed memory straight back
// by exact size (so that reuse is immediate), kernels timed by their op attributes, a 10 bytes/ns link with 1 us
// latency, and the fake GPU.
#include "policies/pool/virtual_device_memory.h"
#include "sim/executor.h"
#include "policies/testing/fakes.h"

namespace dlsim::testing {

// The fakes' kernels, link and GPU, on a pool of the caller's over its device (a PyTorch caching pool, say).
inline RunResult run_on_fakes_with(const Graph& g, const Program& p, PoolPolicy& pool, DeviceMemory& dev,
                                   int iterations = 1) {
  AttrKernels k;
  LinearLink l(10.0, 10.0, 1000);
  GpuSpec gpu = fake_gpu();
  SimContext ctx{g, gpu, k, l, pool, dev};
  SimOptions o;
  o.iterations = iterations;
  return simulate(p, ctx, o);
}

// On the exact-size pool over a 1 GiB device.
inline RunResult run_on_fakes(const Graph& g, const Program& p, int iterations = 1) {
  VirtualDeviceMemory dev(1 << 30);
  ExactCachePool pool(dev);
  return run_on_fakes_with(g, p, pool, dev, iterations);
}

}  // namespace dlsim::testing
