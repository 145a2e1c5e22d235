// dlsim's pytorch-caching model against PyTorch's CUDACachingAllocator itself (tests/upstream/README.md: how to
// get the source and build this). Every trace goes through both, call by call; a difference fails with the call
// that differs.
#include <catch2/catch.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tests/upstream/pytorch_replay.h"
#include "common/byte_units.h"
#include "tests/upstream/recorded_run.h"

using namespace dlsim;

namespace {


struct Opt {
  uint64_t max_split_mb = 0;
  uint64_t divisions = 0;
  double gc = 0;
  double fraction = 0;
  bool expandable = false;
};

PytorchCachingOptions options(const Opt& x) {
  PytorchCachingOptions o;
  if (x.max_split_mb) o.max_split_size = x.max_split_mb * kMiB;
  o.roundup_power2_divisions = x.divisions;
  o.garbage_collection_threshold = x.gc;
  o.memory_fraction = x.fraction;
  o.expandable_segments = x.expandable;
  return o;
}

void check(const upstream::PytorchReplayCase& c) {
  const upstream::PytorchReplayResult r = upstream::replay_through_pytorch(c);
  INFO(r.first_mismatch);
  CHECK(r.first_mismatch.empty());
  // One line per trace for the record (ctest -V shows it).
  std::printf("pytorch replay %-52s allocs %6zu  frees %6zu  ooms %4zu  empty_cache %3zu  cudaMalloc %4llu  "
              "cudaFree %4llu  device allocs %4llu  retries %3llu  gc blocks %3llu  streams %d  peak %llu\n",
              c.name.c_str(), r.allocations, r.frees, r.ooms, r.empty_caches,
              static_cast<unsigned long long>(r.cuda_mallocs), static_cast<unsigned long long>(r.cuda_frees),
              static_cast<unsigned long long>(r.device_allocs), static_cast<unsigned long long>(r.alloc_retries),
              static_cast<unsigned long long>(r.gc_released), r.streams,
              static_cast<unsigned long long>(r.peak_reserved));
  CHECK(r.allocations > 0);
}

}  // namespace

TEST_CASE("upstream PyTorch: simulated training runs, call for call", "[upstream][pytorch]") {
  struct Run {
    std::string yaml;
    Opt o;
    std::string label;
  };
  const std::string h100 = "hw: h100-sxm, pool: pytorch-caching, swap: none, concurrency: serial, iterations: 3}";
  const std::string v100 = "hw: v100-sxm2-16gb, pool: pytorch-caching, swap: none, concurrency: serial, iterations: 1}";
  const std::vector<Run> runs = {
      {"{model: resnet50, batch: 32, " + h100, {}, "resnet50 b32"},
      {"{model: resnet50, batch: 32, " + h100, {.max_split_mb = 64}, "resnet50 b32 max_split_size_mb 64"},
      {"{model: resnet50, batch: 32, " + h100, {.divisions = 4}, "resnet50 b32 roundup_power2_divisions 4"},
      {"{model: resnet50, batch: 32, " + h100, {.expandable = true}, "resnet50 b32 expandable_segments"},
      {"{model: vgg16, batch: 32, " + h100, {}, "vgg16 b32"},
      {"{model: vgg16, batch: 32, " + h100, {.gc = 0.5, .fraction = 0.1}, "vgg16 b32 gc 0.5 fraction 0.1"},
      {"{model: googlenet, batch: 64, " + h100, {}, "googlenet b64"},
      {"{model: mobilenet_v2, batch: 32, " + h100, {}, "mobilenet_v2 b32"},
      {"{model: bert-base, batch: 16, " + h100, {}, "bert-base b16"},
      {"{model: bert-base, batch: 16, " + h100, {.expandable = true}, "bert-base b16 expandable_segments"},
      {"{model: cifar-vgg16, batch: 100, " + h100, {.divisions = 8}, "cifar-vgg16 b100 roundup 8"},
      // Out of memory: VGG-16 at batch 256 does not fit a 16 GB V100.
      {"{model: vgg16, batch: 256, " + v100, {}, "vgg16 b256 v100 oom"},
      {"{model: vgg16, batch: 256, " + v100, {.max_split_mb = 128}, "vgg16 b256 v100 max_split 128 oom"},
      {"{model: vgg16, batch: 256, " + v100, {.expandable = true}, "vgg16 b256 v100 expandable oom"},
      {"{model: vgg16, batch: 32, " + v100, {.fraction = 0.3}, "vgg16 b32 v100 fraction 0.3"},
  };
  for (const Run& run : runs) {
    SECTION(run.label) {
      const PytorchCachingOptions o = options(run.o);
      upstream::RecordedRun rec = upstream::record_run(
          run.yaml, [&](DeviceMemory& dev) { return std::make_unique<PytorchCachingPool>(dev, o); });
      check({run.label, rec.capacity, rec.total, o, rec.ops, 0});
    }
  }
}

TEST_CASE("upstream PyTorch: streams, settings, memory fraction, empty_cache and out of memory",
          "[upstream][pytorch]") {
  using testing::cnn_like_trace;
  using testing::phase_change_trace;
  struct Synthetic {
    std::string label;
    uint64_t capacity;
    uint64_t total;
    Opt o;
    int streams;
    uint64_t seed;
    size_t empty_cache_every;
    bool phases;
  };
  // CNN-like: 60 layers x 3 iterations (up to 96 MiB tensors). Phases: 8 phases of 40 tensors from 32 KiB to
  // 240 MiB. Devices with a totalGlobalMem above the capacity have a CUDA context's share taken out.
  const std::vector<Synthetic> cases = {
      {"1 stream", 8 * kGiB, 0, {}, 1, 1, 0, false},
      {"3 streams", 8 * kGiB, 0, {}, 3, 2, 0, false},
      {"3 streams, empty_cache every 97 calls", 8 * kGiB, 0, {}, 3, 2, 97, false},
      {"2 streams, max_split_size_mb 40", 8 * kGiB, 0, {.max_split_mb = 40}, 2, 3, 0, false},
      {"2 streams, roundup_power2_divisions 2", 8 * kGiB, 0, {.divisions = 2}, 2, 4, 0, false},
      {"2 streams, roundup_power2_divisions 16", 8 * kGiB, 0, {.divisions = 16}, 2, 4, 0, false},
      {"2 streams, tight device: retries", 700 * kMiB, 0, {}, 2, 5, 0, false},
      {"2 streams, tight device, max_split 40", 700 * kMiB, 0, {.max_split_mb = 40}, 2, 5, 0, false},
      {"fraction 0.4 of a context-sized device", 2 * kGiB, 2 * kGiB + 500 * kMiB, {.fraction = 0.4}, 2, 6, 0, false},
      {"gc 0.6, fraction 0.7", 2 * kGiB, 0, {.gc = 0.6, .fraction = 0.7}, 2, 7, 0, false},
      {"gc 0.3, fraction 0.4, max_split 40", 4 * kGiB, 0, {.max_split_mb = 40, .gc = 0.3, .fraction = 0.4}, 3, 8, 0,
       false},
      {"tiny device: mostly out of memory", 256 * kMiB, 0, {}, 2, 9, 0, false},
      {"expandable, 1 stream", 8 * kGiB, 0, {.expandable = true}, 1, 10, 0, false},
      {"expandable, 3 streams, tight device", 900 * kMiB, 0, {.expandable = true}, 3, 11, 0, false},
      {"expandable, empty_cache every 61 calls", 8 * kGiB, 0, {.expandable = true}, 2, 12, 61, false},
      {"expandable, max_split 40, tight device", 500 * kMiB, 0, {.max_split_mb = 40, .expandable = true}, 2, 14, 0,
       false},
      {"expandable, context-sized device", 2 * kGiB, 2 * kGiB + 500 * kMiB, {.expandable = true}, 2, 13, 0, false},
      {"phases, 2 streams", 8 * kGiB, 0, {}, 2, 1, 0, true},
      {"phases, 1200 MiB device", 1200 * kMiB, 0, {}, 2, 2, 0, true},
      {"phases, 1200 MiB device, max_split 64", 1200 * kMiB, 0, {.max_split_mb = 64}, 2, 2, 0, true},
      {"phases, gc 0.5, fraction 0.6", 2 * kGiB, 0, {.gc = 0.5, .fraction = 0.6}, 2, 3, 0, true},
      {"phases, expandable, 1200 MiB device", 1200 * kMiB, 0, {.expandable = true}, 2, 4, 0, true},
      {"phases, expandable, empty_cache every 37", 8 * kGiB, 0, {.expandable = true}, 3, 5, 37, true},
  };
  for (const Synthetic& s : cases) {
    SECTION(s.label) {
      auto ops = s.phases ? phase_change_trace(s.seed, 8, 40, s.streams) : cnn_like_trace(s.seed, 60, 3, s.streams);
      check({s.label, s.capacity, s.total, options(s.o), std::move(ops), s.empty_cache_every});
    }
  }
}

// A known difference of versions, not of the model: at 001074d, when mapping more pages fails with
// max_split_size_mb set, release_available_cached_blocks hands a free oversize block of an expandable segment to
// release_block, whose TORCH_INTERNAL_ASSERT(!block->expandable_segment_) fails, so malloc raises c10::Error instead of
// unmapping and retrying. Later PyTorch (the AcceleratorAllocatorConfig versions) skips such blocks there, and so does
// dlsim's model: it goes on to release the cache and allocates. The check pins that this is the only difference.
TEST_CASE("upstream PyTorch: 001074d asserts where later PyTorch and dlsim pass over expandable blocks",
          "[upstream][pytorch]") {
  const PytorchCachingOptions o = options({.max_split_mb = 64, .expandable = true});
  const upstream::PytorchReplayResult r = upstream::replay_through_pytorch(
      {"phases, expandable, max_split 64, 1200 MiB device", 1200 * kMiB, 0, o,
       testing::phase_change_trace(4, 8, 40, 2), 0});
  INFO(r.first_mismatch);
  CHECK(r.first_mismatch.find("dlsim allocated, PyTorch raised c10::Error") != std::string::npos);
  CHECK(r.first_mismatch.find("!block->expandable_segment_") != std::string::npos);
  std::printf("pytorch replay %-52s allocs %6zu agreed before PyTorch's internal assert\n",
              "phases, expandable, max_split 64, 1200 MiB device", r.allocations - 1);
}

