// dlsim's cnmem model against NVIDIA's cnmem itself (tests/upstream/README.md: how to get the source and build
// this). Every trace goes through both, call by call; a difference fails with the call that differs.
#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tests/upstream/cnmem_replay.h"
#include "common/byte_units.h"
#include "tests/upstream/recorded_run.h"

using namespace dlsim;
using dlsim::testing::AllocTraceOp;

namespace {


CnmemOptions options(uint64_t init_mb, bool cannot_grow = false, bool cannot_steal = false,
                     bool stream_children = true) {
  CnmemOptions o;
  o.init_size_bytes = init_mb * kMiB;
  o.cannot_grow = cannot_grow;
  o.cannot_steal = cannot_steal;
  o.stream_children = stream_children;
  return o;
}

upstream::RecordedRun record_run(const std::string& yaml, const CnmemOptions& o) {
  return upstream::record_run(yaml, [&](DeviceMemory& dev) { return std::make_unique<CnmemPool>(dev, o); });
}

void check(const upstream::CnmemReplayCase& c) {
  const upstream::CnmemReplayResult r = upstream::replay_through_cnmem(c);
  INFO(r.first_mismatch);
  CHECK(r.first_mismatch.empty());
  // One line per trace for the record (ctest -V shows it; the closing notes quote it).
  std::printf("cnmem replay %-44s allocs %6zu  frees %6zu  ooms %4zu  cudaMalloc %4llu  syncs %5llu  steals %3llu  "
              "streams %d  peak %llu\n",
              c.name.c_str(), r.allocations, r.frees, r.ooms, static_cast<unsigned long long>(r.cuda_mallocs),
              static_cast<unsigned long long>(r.stream_syncs), static_cast<unsigned long long>(r.steals), r.streams,
              static_cast<unsigned long long>(r.peak_reserved));
  CHECK(r.allocations > 0);
}

}  // namespace

TEST_CASE("upstream cnmem: simulated training runs, call for call", "[upstream][cnmem]") {
  struct Run {
    std::string yaml;
    CnmemOptions o;
    std::string label;
  };
  const std::vector<Run> runs = {
      {"{model: resnet50, batch: 32, hw: h100-sxm, pool: cnmem, swap: none, concurrency: serial, iterations: 3}", options(0), "resnet50 b32 default"},
      {"{model: resnet50, batch: 32, hw: h100-sxm, pool: cnmem, swap: none, concurrency: serial, iterations: 3}", options(256), "resnet50 b32 256MiB"},
      {"{model: vgg16, batch: 32, hw: h100-sxm, pool: cnmem, swap: none, concurrency: serial, iterations: 3}", options(256), "vgg16 b32 256MiB"},
      {"{model: googlenet, batch: 64, hw: h100-sxm, pool: cnmem, swap: none, concurrency: serial, iterations: 3}", options(256), "googlenet b64 256MiB"},
      {"{model: mobilenet_v2, batch: 32, hw: h100-sxm, pool: cnmem, swap: none, concurrency: serial, iterations: 3}", options(64), "mobilenet_v2 b32 64MiB"},
      {"{model: bert-base, batch: 16, hw: h100-sxm, pool: cnmem, swap: none, concurrency: serial, iterations: 3}", options(256), "bert-base b16 256MiB"},
      {"{model: cifar-vgg16, batch: 100, hw: h100-sxm, pool: cnmem, swap: none, concurrency: serial, iterations: 3}", options(256), "cifar-vgg16 b100"},
      // Out of memory: VGG-16 at batch 256 does not fit a 16 GB V100, growing or not.
      {"{model: vgg16, batch: 256, hw: v100-sxm2-16gb, pool: cnmem, swap: none, concurrency: serial, iterations: 1}", options(256), "vgg16 b256 v100 oom"},
      {"{model: vgg16, batch: 256, hw: v100-sxm2-16gb, pool: cnmem, swap: none, concurrency: serial, iterations: 1}", options(4096, true),
       "vgg16 b256 v100 cannot_grow"},
  };
  for (const Run& run : runs) {
    SECTION(run.label) {
      upstream::RecordedRun rec = record_run(run.yaml, run.o);
      check({run.label, rec.capacity, rec.total, run.o, rec.ops});
    }
  }
}

TEST_CASE("upstream cnmem: streams, stealing, growth limits and out of memory", "[upstream][cnmem]") {
  using testing::cnn_like_trace;
  struct Synthetic {
    std::string label;
    uint64_t capacity, total;
    CnmemOptions o;
    int streams;
    uint64_t seed;
  };
  // 60 layers x 3 iterations of CNN-like sizes (up to 96 MiB each): roughly 1-2 GiB live at the peak.
  const std::vector<Synthetic> cases = {
      {"1 stream, grows", 8 * kGiB, 8 * kGiB + 512 * kMiB, options(0), 1, 1},
      {"3 streams, grows", 8 * kGiB, 8 * kGiB, options(64), 3, 2},
      {"4 streams, tight device", 640 * kMiB, 640 * kMiB, options(256), 4, 3},
      {"4 streams, tight device, cannot_steal", 640 * kMiB, 640 * kMiB, options(256, false, true), 4, 3},
      {"3 streams, cannot_grow", 8 * kGiB, 8 * kGiB, options(448, true), 3, 4},
      {"3 streams, cannot_grow, cannot_steal", 8 * kGiB, 8 * kGiB, options(448, true, true), 3, 4},
      {"3 streams, all on the root", 8 * kGiB, 8 * kGiB, options(64, false, false, false), 3, 5},
      {"2 streams, tiny device: mostly out of memory", 512 * kMiB, 768 * kMiB, options(0), 2, 6},
  };
  for (const Synthetic& s : cases) {
    SECTION(s.label) { check({s.label, s.capacity, s.total, s.o, cnn_like_trace(s.seed, 60, 3, s.streams)}); }
  }
}
