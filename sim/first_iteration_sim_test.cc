// A Program with a first iteration (program/first_iteration.h) through PyTorch's caching allocator: the reserved
// peak is the maximum over the first iteration and the steady ones after it, as torch.cuda.max_memory_reserved
// is over a run's first steps and its later ones.
#include <catch2/catch.hpp>

#include "sim/testing/fake_run.h"

#include "common/byte_units.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/pool/pytorch_caching_pool.h"
#include "policies/pool/virtual_device_memory.h"
#include "policies/testing/fakes.h"
#include "program/first_iteration.h"
#include "program/lower.h"
#include "sim/executor.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

RunResult run_caching(const Graph& g, const Program& p, int iterations) {
  VirtualDeviceMemory dev(uint64_t{1} << 30);
  PytorchCachingPool pool(dev, PytorchCachingOptions{});
  return run_on_fakes_with(g, p, pool, dev, iterations);
}

}  // namespace

TEST_CASE("first iteration: the reserved peak is the maximum over the first iteration and the steady ones") {
  // w (12 MiB) and its momentum m (12 MiB); forward w -> a (40 MiB), backward (a, w) -> g (12 MiB), step
  // (w, g, m). Every request is a large one of 10 MiB or more: a segment of its own size when nothing cached fits.
  Graph g;
  const TensorId w = tensor(g, "w", 12 * kMiB, true), m = tensor(g, "m", 12 * kMiB, true);
  g.tensor(m).kind = TensorKind::OptimizerState;
  const TensorId a = tensor(g, "a", 40 * kMiB), grad = tensor(g, "g", 12 * kMiB);
  op(g, "fwd", {w}, {a});
  op(g, "bwd", {a, w}, {grad});
  const OpId opt = op(g, "opt", {w, grad, m}, {w, m});
  const Program steady = lower(g, serial_schedule_of(g), SwapPlan{});

  // m with the weights: w and m take a segment each, a and g one each in the first iteration, and every later
  // iteration finds a's and g's segments cached: 12 + 12 + 40 + 12 = 76 MiB.
  const RunResult pre = run_caching(g, steady, 3);
  REQUIRE(pre.iterations_completed == 3);
  CHECK(pre.peak_reserved_bytes == 76 * kMiB);
  CHECK(pre.peak_live_bytes == 76 * kMiB);

  // m at the first step: a's 40 MiB segment is free (the backward is done), so m is split from it (28 MiB left
  // cached) and the first iteration reserves 12 + 40 + 12 = 64 MiB. The second forward's a fits in neither
  // cached block (those 28 MiB, and g's 12 MiB segment): a new 40 MiB segment, 104 MiB, which the third
  // iteration reuses.
  Program lazy = steady;
  allocate_at_first_use(lazy, g, {{{m}, {opt}}});
  CHECK(run_caching(g, lazy, 1).peak_reserved_bytes == 64 * kMiB);
  const RunResult r = run_caching(g, lazy, 3);
  REQUIRE(r.iterations_completed == 3);
  CHECK(r.peak_reserved_bytes == 104 * kMiB);
  CHECK(r.peak_live_bytes == 76 * kMiB);  // the live peak is the steady iteration's either way
  CHECK(r.device_malloc_calls == 4);
  CHECK(pre.device_malloc_calls == 4);
}
