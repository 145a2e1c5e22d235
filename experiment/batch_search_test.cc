// dlsim fit on a device made small by a hardware override: the batch it finds fits and the next one does not.
#include "experiment/batch_search.h"

#include <catch2/catch.hpp>

#include "common/config_error.h"

using namespace dlsim;

namespace {
// On h100-sxm-harness (the harness's C++ launch, a device-bound step): under h100-sxm's PyTorch host this small
// step is host-bound, and SINGA's no-overhead plan at limit 1.0 swaps where the device idles but each copy's issue
// lengthens the host (+1.6 %), so no limit would cost nothing.
Experiment small_gpu(const std::string& swap, const std::string& pool = "cnmem") {
  return experiment_from_yaml(
      YAML::Load("{model: cifar-alexnet, batch: 100, hw: h100-sxm-harness, pool: " + pool +
                 ", concurrency: serial, iterations: 2,"
                 " hw_override: {memory: {total_mib: 1024, context_reserve_mib: 512}}, swap: " + swap + "}"),
      "fit.yaml");
}
RunFn runner() {
  return [](const Experiment& e) { return run_experiment(e); };
}
}  // namespace

TEST_CASE("fit finds the largest batch that runs without out-of-memory: the next one does not") {
  const Experiment e = small_gpu("none");
  const FitResult f = find_max_batch(e, runner());
  REQUIRE(f.max_batch > 100);
  CHECK_FALSE(f.at_max.oom);
  Experiment next = e;
  next.batch = f.max_batch + 1;
  CHECK(run_experiment(next).oom);
  // doubling from 100 until a run fails, then bisection: every probe between the bounds is recorded
  CHECK(f.probes.front() == std::pair<int64_t, bool>{100, true});
  const auto j = to_json(f, {});
  CHECK(j["max_batch"] == f.max_batch);
  CHECK(j["peak_reserved_bytes"].get<uint64_t>() <= 512ull << 20);
}

TEST_CASE("fit with a swap policy aiming at the device fits a larger batch") {
  // With `planned` the pool holds what is live (a plan of the profiled iteration), so a plan that keeps the
  // live bytes under the device's capacity fits; cnmem's fragments can run out of memory below it.
  const int64_t plain = find_max_batch(small_gpu("none", "planned"), runner()).max_batch;
  const int64_t swapped = find_max_batch(small_gpu("{name: fastest-under-limit}", "planned"), runner()).max_batch;
  CHECK(swapped > plain);
}

TEST_CASE("memory at overhead needs a swap policy with a limit, and reports per bound") {
  CHECK_THROWS_AS(memory_at_overhead(small_gpu("{name: vdnn}"), {0.05}, runner()), ConfigError);
  const auto m = memory_at_overhead(small_gpu("{name: singa, mode: no-overhead}"), {0.0, 0.5}, runner());
  REQUIRE(m.size() == 2);
  CHECK(m[0].found);  // the no-swap-like limit 1.0 costs nothing
  CHECK(m[0].overhead <= 0.0);
  CHECK(m[1].peak_live_bytes <= m[0].peak_live_bytes);  // a looser bound never needs more memory
}
