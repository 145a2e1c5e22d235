// dlsim's TF BFC model against TensorFlow's BFCAllocator itself (tests/upstream/README.md: how to get the source
// and build this). Every trace goes through both, call by call; a difference fails with the call that differs.
#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tests/upstream/tf_bfc_replay.h"
#include "common/byte_units.h"
#include "tests/upstream/recorded_run.h"

using namespace dlsim;
using dlsim::testing::AllocTraceOp;

namespace {


TfBfcOptions options(bool allow_growth, uint64_t limit_mb = 0, bool gc = true) {
  TfBfcOptions o;
  o.allow_growth = allow_growth;
  o.memory_limit = limit_mb * kMiB;
  o.garbage_collection = gc;
  return o;
}

upstream::RecordedRun record_run(const std::string& yaml, const TfBfcOptions& o) {
  return upstream::record_run(yaml, [&](DeviceMemory& dev) { return std::make_unique<TfBfcPool>(dev, o); });
}

void check(const upstream::TfBfcReplayCase& c) {
  const upstream::TfBfcReplayResult r = upstream::replay_through_tf_bfc(c);
  INFO(r.first_mismatch);
  CHECK(r.first_mismatch.empty());
  // One line per trace for the record (ctest -V shows it).
  std::printf("tf-bfc replay %-46s allocs %6zu  frees %6zu  ooms %4zu  cudaMalloc %4llu  cudaFree %3llu  "
              "retry waits %4llu  gc regions %3llu  backpedals %4llu  streams %d  peak %llu\n",
              c.name.c_str(), r.allocations, r.frees, r.ooms, static_cast<unsigned long long>(r.cuda_mallocs),
              static_cast<unsigned long long>(r.cuda_frees), static_cast<unsigned long long>(r.retry_waits),
              static_cast<unsigned long long>(r.gc_regions), static_cast<unsigned long long>(r.backpedals),
              r.streams, static_cast<unsigned long long>(r.peak_reserved));
  CHECK(r.allocations > 0);
}

}  // namespace

TEST_CASE("upstream TF BFC: simulated training runs, call for call", "[upstream][tf-bfc]") {
  struct Run {
    std::string yaml;
    TfBfcOptions o;
    std::string label;
  };
  const std::string h100 = "hw: h100-sxm, pool: tf-bfc, swap: none, concurrency: serial, iterations: 3}";
  const std::string v100 = "hw: v100-sxm2-16gb, pool: tf-bfc, swap: none, concurrency: serial, iterations: 1}";
  const std::vector<Run> runs = {
      {"{model: resnet50, batch: 32, " + h100, options(false), "resnet50 b32 whole limit"},
      {"{model: resnet50, batch: 32, " + h100, options(true), "resnet50 b32 allow_growth"},
      {"{model: vgg16, batch: 32, " + h100, options(true), "vgg16 b32 allow_growth"},
      {"{model: googlenet, batch: 64, " + h100, options(true), "googlenet b64 allow_growth"},
      {"{model: mobilenet_v2, batch: 32, " + h100, options(true), "mobilenet_v2 b32 allow_growth"},
      {"{model: bert-base, batch: 16, " + h100, options(true), "bert-base b16 allow_growth"},
      {"{model: cifar-vgg16, batch: 100, " + h100, options(true), "cifar-vgg16 b100 allow_growth"},
      {"{model: vgg16, batch: 32, " + h100, options(true, 3000), "vgg16 b32 growth limit 3000 MiB oom"},
      // Out of memory: VGG-16 at batch 256 does not fit a 16 GB V100, whole limit or growing, collecting or not.
      {"{model: vgg16, batch: 256, " + v100, options(false), "vgg16 b256 v100 whole limit oom"},
      {"{model: vgg16, batch: 256, " + v100, options(true), "vgg16 b256 v100 allow_growth oom"},
      {"{model: vgg16, batch: 256, " + v100, options(true, 0, false), "vgg16 b256 v100 growth no gc oom"},
  };
  for (const Run& run : runs) {
    SECTION(run.label) {
      upstream::RecordedRun rec = record_run(run.yaml, run.o);
      check({run.label, rec.capacity, rec.total, run.o, rec.ops});
    }
  }
}

TEST_CASE("upstream TF BFC: streams, growth limits, garbage collection and out of memory", "[upstream][tf-bfc]") {
  using testing::cnn_like_trace;
  struct Synthetic {
    std::string label;
    uint64_t capacity;
    TfBfcOptions o;
    int streams;
    uint64_t seed;
  };
  // 60 layers x 3 iterations of CNN-like sizes (up to 96 MiB each): roughly 1-2 GiB live at the peak.
  const std::vector<Synthetic> cases = {
      {"1 stream, grows", 8 * kGiB, options(true), 1, 1},
      {"3 streams, grows", 8 * kGiB, options(true), 3, 2},
      {"3 streams, whole limit", 8 * kGiB, options(false), 3, 2},
      {"2 streams, growth limit 700 MiB", 8 * kGiB, options(true, 700), 2, 3},
      {"2 streams, whole limit 700 MiB", 8 * kGiB, options(false, 700), 2, 3},
      {"4 streams, tight device, grows, gc", 640 * kMiB, options(true), 4, 4},
      {"4 streams, tight device, grows, no gc", 640 * kMiB, options(true, 0, false), 4, 4},
      {"limit above the device, grows, gc", 600 * kMiB, options(true, 1024), 2, 5},
      {"limit above the device, whole limit", 600 * kMiB, options(false, 1024), 2, 5},
      {"2 streams, tiny device: mostly out of memory", 256 * kMiB, options(true), 2, 6},
  };
  for (const Synthetic& s : cases) {
    SECTION(s.label) { check({s.label, s.capacity, 0, s.o, cnn_like_trace(s.seed, 60, 3, s.streams)}); }
  }
  // Phases of different tensor sizes leave regions that hold nothing: garbage collection frees them when growth
  // is blocked (8 phases of 40 tensors from 32 KiB to 240 MiB, at most 9 live per phase plus one kept per phase).
  using testing::phase_change_trace;
  const std::vector<Synthetic> phased = {
      {"phases, 2 streams, 1200 MiB device, gc", 1200 * kMiB, options(true), 2, 1},
      {"phases, 2 streams, 1200 MiB device, no gc", 1200 * kMiB, options(true, 0, false), 2, 1},
      {"phases, 3 streams, growth limit 1150 MiB, gc", 8 * kGiB, options(true, 1150), 3, 3},
      {"phases, 3 streams, growth limit 1150 MiB, no gc", 8 * kGiB, options(true, 1150, false), 3, 3},
      {"phases, limit above the device, gc", 700 * kMiB, options(true, 1200), 2, 4},
      {"phases, whole limit", 1200 * kMiB, options(false), 2, 5},
  };
  for (const Synthetic& s : phased) {
    SECTION(s.label) { check({s.label, s.capacity, 0, s.o, phase_change_trace(s.seed, 8, 40, s.streams)}); }
  }
}
