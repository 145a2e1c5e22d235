// Issue 14's honest labels: a pool that reserves by its configuration (cnmem's cnmemInit region, tf-bfc's whole
// memory limit without allow_growth) shows its excess over the live peak as a reservation, not as fragmentation;
// a pool that grows on demand (or one that outgrew its first reservation) shows fragmentation.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "experiment/sweep/csv_line.h"
#include "experiment/experiment.h"
#include "experiment/run_experiment.h"
#include "experiment/sweep/sweep.h"
#include "common/strings.h"

using namespace dlsim;

namespace {

ExperimentResult run_with(const std::string& pool) {
  return run_experiment(experiment_from_yaml(
      YAML::Load("{model: cifar-resnet20, batch: 32, hw: h100-sxm, swap: none, concurrency: serial, iterations: 2, pool: " +
                 pool + "}"),
      "excess"));
}

}  // namespace

TEST_CASE("a pool's up-front reservation is labelled as such, fragmentation only for pools that grow on demand") {
  const ExperimentResult cnmem = run_with("cnmem");  // cnmemInit: half of totalGlobalMem
  CHECK(cnmem.up_front_reserved_bytes > 30ull << 30);
  CHECK(cnmem.peak_reserved_bytes == cnmem.up_front_reserved_bytes);
  CHECK(cnmem.reserved_up_front());

  const ExperimentResult tf = run_with("tf-bfc");  // no allow_growth: the whole memory limit at the first call
  CHECK(tf.up_front_reserved_bytes > 70ull << 30);
  CHECK(tf.reserved_up_front());

  const ExperimentResult small = run_with("{name: cnmem, init_size_mb: 1}");  // outgrows its 1 MiB
  CHECK(small.up_front_reserved_bytes == 1u << 20);
  CHECK(small.peak_reserved_bytes > small.up_front_reserved_bytes);
  CHECK_FALSE(small.reserved_up_front());

  for (const char* grows : {"{name: tf-bfc, allow_growth: true}", "pytorch-caching", "cuda-malloc"}) {
    INFO(grows);
    const ExperimentResult r = run_with(grows);
    CHECK(r.up_front_reserved_bytes == 0);
    CHECK_FALSE(r.reserved_up_front());
  }
}

TEST_CASE("a sweep's rows and summary label a reservation as such, and fragmentation as fragmentation") {
  const ExperimentResult cnmem = run_with("cnmem");
  const ExperimentResult caching = run_with("pytorch-caching");
  const std::string header = runs_csv_header();
  CHECK(header.find(",up_front_reserved_bytes,reserved_excess,error") != std::string::npos);
  const std::string a = runs_csv_row(cnmem, "ok", ""), b = runs_csv_row(caching, "ok", "");
  CHECK(a.find("," + std::to_string(cnmem.up_front_reserved_bytes) + ",reserved up front,") != std::string::npos);
  CHECK(b.find(",0,fragmentation,") != std::string::npos);
  Sweep s;
  s.name = "labels";
  s.file = "labels.yaml";
  const std::string md = sweep_summary(s, {a, b});
  CHECK(md.find("| reserved up front |") != std::string::npos);
  const std::string pct = fixed(caching.fragmentation() * 100.0, 1) + "% |";
  CHECK(md.find(pct) != std::string::npos);
  CHECK(md.find("1316") == std::string::npos);  // cnmem's half of the device is not shown as a percentage
  // an error row keeps the column count
  std::vector<std::string> h, e;
  split_csv_line(header, h);
  split_csv_line(runs_csv_row(cnmem, "error", "boom"), e);
  CHECK(e.size() == h.size());
}
