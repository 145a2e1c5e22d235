// PyTorch's cuBLAS workspaces through a whole run (hw/cublas_workspace.h): on the H200 file every peak holds the
// two 32 MiB and two 1 MiB blocks the H200's memory snapshots showed (results/fidelity/memory.md), and they add
// segments of their own to the reserved bytes.
#include <catch2/catch.hpp>

#include "experiment/experiment.h"
#include "experiment/run_experiment.h"

using namespace dlsim;

namespace {

constexpr uint64_t kCublasRunMiB = uint64_t{1} << 20;

ExperimentResult run_h200(const std::string& extra) {
  const std::string text = "model: cifar-resnet20\nbatch: 8\nhw: h200\npool: pytorch-caching\nswap: none\n"
                           "concurrency: serial\niterations: 2\noptimizer: sgd-momentum\n" + extra;
  return run_experiment(experiment_from_yaml(YAML::Load(text), "exp.yaml"));
}

}  // namespace

TEST_CASE("cuBLAS workspaces: live at every peak of an H200 run, 2 x 32 MiB + 2 x 1 MiB") {
  const ExperimentResult with = run_h200("");
  const ExperimentResult without =
      run_h200("hw_override: {memory: {cublas_workspace_kib: 0, cublaslt_workspace_kib: 0}}\n");
  REQUIRE_FALSE(with.oom);
  REQUIRE_FALSE(without.oom);
  // Held from before the first iteration to the end: every live count is 66 MiB higher, the peak's too.
  CHECK(with.peak_live_bytes == without.peak_live_bytes + 66 * kCublasRunMiB);
  const auto ws = [](const ExperimentResult& r) {
    return r.memory_breakdown.at("at_peak_live").at("workspaces").get<uint64_t>();
  };
  CHECK(ws(with) >= 66 * kCublasRunMiB);
  // Each 32 MiB request is a large one (10 MiB and up): a segment of its own; the two 1 MiB ones fit the small pool's
  // 2 MiB segments.
  CHECK(with.peak_reserved_bytes >= without.peak_reserved_bytes + 64 * kCublasRunMiB);
  CHECK(with.peak_reserved_bytes <= without.peak_reserved_bytes + 68 * kCublasRunMiB);
}
