// Allocator operations per second of each online pool on a synthetic CNN-like trace (3 iterations of 300
// layers, ~5,400 allocs + frees, 1 or 2 streams), each run on a fresh device and pool so the first-iteration
// growth is included as it is in a real run.
#include <benchmark/benchmark.h>

#include <map>

#include "policies/pool/cnmem_pool.h"
#include "policies/pool/cuda_malloc_pool.h"
#include "policies/pool/pytorch_caching_pool.h"
#include "policies/pool/testing/synthetic_alloc_trace.h"
#include "policies/pool/tf_bfc_pool.h"
#include "policies/pool/virtual_device_memory.h"

namespace dlsim {
namespace {

using namespace testing;

template <class MakePool>
void run_trace(benchmark::State& state, MakePool make) {
  const auto trace = cnn_like_trace(1, 300, 3, static_cast<int>(state.range(0)));
  for (auto _ : state) {
    VirtualDeviceMemory dev(64ull << 30);
    auto pool = make(dev);
    std::map<uint32_t, DevPtr> live;
    for (const AllocTraceOp& op : trace) {
      if (op.alloc) {
        if (auto p = pool->allocate({op.bytes, op.stream})) live.emplace(op.id, *p);
      } else if (auto it = live.find(op.id); it != live.end()) {
        pool->deallocate(it->second);
        live.erase(it);
      }
    }
    benchmark::DoNotOptimize(pool->stats().peak_allocated_bytes);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * trace.size()));
}

void BM_CudaMalloc(benchmark::State& s) {
  run_trace(s, [](DeviceMemory& d) { return std::make_unique<CudaMallocPool>(d); });
}
void BM_Cnmem(benchmark::State& s) {
  run_trace(s, [](DeviceMemory& d) { return std::make_unique<CnmemPool>(d, CnmemOptions{}); });
}
void BM_PytorchCaching(benchmark::State& s) {
  run_trace(s, [](DeviceMemory& d) { return std::make_unique<PytorchCachingPool>(d, PytorchCachingOptions{}); });
}
void BM_TfBfc(benchmark::State& s) {
  run_trace(s, [](DeviceMemory& d) { return std::make_unique<TfBfcPool>(d, TfBfcOptions{}); });
}

BENCHMARK(BM_CudaMalloc)->Arg(1)->Arg(2);
BENCHMARK(BM_Cnmem)->Arg(1)->Arg(2);
BENCHMARK(BM_PytorchCaching)->Arg(1)->Arg(2);
BENCHMARK(BM_TfBfc)->Arg(1)->Arg(2);

}  // namespace
}  // namespace dlsim
