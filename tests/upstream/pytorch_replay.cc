#include "tests/upstream/pytorch_replay.h"

#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "policies/pool/virtual_device_memory.h"
#include "tests/upstream/cuda_stub/cuda_stub.h"
#include "tests/upstream/pytorch_stub/pytorch_stub.h"
#include "tests/upstream/pytorch_upstream_allocator.h"

namespace dlsim::upstream {
namespace {

uint64_t report_u64(const PoolPolicy& p, const char* key) { return p.report()[key].get<uint64_t>(); }

}  // namespace

std::string pytorch_alloc_conf(const PytorchCachingOptions& o) {
  // The upstream version replayed predates max_non_split_rounding_mb: it always allows kLargeBuffer (20 MiB).
  if (o.max_non_split_rounding != PytorchCachingOptions{}.max_non_split_rounding)
    throw std::invalid_argument("pytorch replay: the PyTorch version replayed has no max_non_split_rounding_mb");
  std::string conf;
  auto add = [&](const std::string& kv) {
    if (!conf.empty()) conf += ',';
    conf += kv;
  };
  if (o.max_split_size != UINT64_MAX) add("max_split_size_mb:" + std::to_string(o.max_split_size >> 20));
  if (o.roundup_power2_divisions) add("roundup_power2_divisions:" + std::to_string(o.roundup_power2_divisions));
  if (o.garbage_collection_threshold > 0) {
    std::ostringstream s;
    s.precision(17);
    s << o.garbage_collection_threshold;
    add("garbage_collection_threshold:" + s.str());
  }
  if (o.expandable_segments) add("expandable_segments:True");
  return conf;
}

PytorchReplayResult replay_through_pytorch(const PytorchReplayCase& c) {
  PytorchReplayResult r;
  VirtualDeviceMemory ours_dev(c.capacity_bytes, c.total_global_mem_bytes);
  VirtualDeviceMemory real_dev(c.capacity_bytes, c.total_global_mem_bytes);
  PytorchCachingPool ours(ours_dev, c.options);
  use_device(&real_dev);
  reset_pytorch_stub();
  auto real = std::make_unique<RealPytorchAllocator>(pytorch_alloc_conf(c.options));
  if (c.options.memory_fraction > 0) real->set_memory_fraction(c.options.memory_fraction);

  auto finish = [&]() {
    const RealPytorchStats s = real->stats();
    r.cuda_mallocs = real_dev.malloc_calls();
    r.cuda_frees = real_dev.free_calls();
    r.device_allocs = static_cast<uint64_t>(s.num_device_alloc);
    r.alloc_retries = static_cast<uint64_t>(s.num_alloc_retries);
    r.gc_released = report_u64(ours, "gc_released_blocks");
    r.peak_reserved = real_dev.peak_reserved();
  };
  auto done = [&]() {
    real.reset();
    use_device(nullptr);
    return r;
  };
  auto mismatch = [&](size_t step, const std::string& what) {
    std::ostringstream s;
    s << c.name << ": call " << step << ": " << what;
    r.first_mismatch = s.str();
    finish();
    return done();
  };
  auto differ = [](const char* what, uint64_t mine, int64_t theirs) {
    return std::string(what) + " " + std::to_string(mine) + " vs PyTorch's " + std::to_string(theirs);
  };

  std::map<uint32_t, DevPtr> live;
  std::set<int> streams;
  for (size_t step = 0; step < c.ops.size(); ++step) {
    const testing::AllocTraceOp& op = c.ops[step];
    if (op.alloc) {
      streams.insert(op.stream);
      ++r.allocations;
      auto mine = ours.allocate({op.bytes, op.stream});
      void* theirs = nullptr;
      try {
        theirs = real->malloc(op.bytes, op.stream);
      } catch (const std::runtime_error& e) {
        return mismatch(step, "alloc of " + std::to_string(op.bytes) + " B on stream " + std::to_string(op.stream) +
                                  ": dlsim " + (mine ? "allocated" : "ran out of memory") + ", " + e.what());
      }
      if (mine.has_value() != (theirs != nullptr))
        return mismatch(step, "alloc of " + std::to_string(op.bytes) + " B on stream " + std::to_string(op.stream) +
                                  (mine ? ": dlsim allocated, PyTorch ran out of memory"
                                        : ": PyTorch allocated, dlsim ran out of memory"));
      if (!mine) {
        ++r.ooms;
      } else {
        if (*mine != stub_offset(theirs))
          return mismatch(step, "alloc of " + std::to_string(op.bytes) + " B on stream " + std::to_string(op.stream) +
                                    ": dlsim at " + std::to_string(*mine) + ", PyTorch at " +
                                    std::to_string(stub_offset(theirs)));
        live.emplace(op.id, *mine);
      }
    } else {
      auto it = live.find(op.id);
      if (it == live.end()) continue;  // its allocation ran out of memory in both
      ++r.frees;
      ours.deallocate(it->second);
      real->free(stub_pointer(it->second));
      live.erase(it);
    }
    if (c.empty_cache_every && (step + 1) % c.empty_cache_every == 0) {
      ours.empty_cache();
      real->empty_cache();
      ++r.empty_caches;
    }
    const RealPytorchStats s = real->stats();
    if (ours_dev.reserved() != real_dev.reserved())
      return mismatch(step, differ("device reserved", ours_dev.reserved(), static_cast<int64_t>(real_dev.reserved())));
    if (report_u64(ours, "reserved_bytes") != static_cast<uint64_t>(s.reserved_bytes))
      return mismatch(step, differ("reserved bytes", report_u64(ours, "reserved_bytes"), s.reserved_bytes));
    if (ours.stats().allocated_bytes != static_cast<uint64_t>(s.allocated_bytes))
      return mismatch(step, differ("allocated bytes", ours.stats().allocated_bytes, s.allocated_bytes));
    if (ours_dev.malloc_calls() != real_dev.malloc_calls())
      return mismatch(step, differ("cudaMalloc calls", ours_dev.malloc_calls(),
                                   static_cast<int64_t>(real_dev.malloc_calls())));
    if (ours_dev.free_calls() != real_dev.free_calls())
      return mismatch(step, differ("cudaFree calls", ours_dev.free_calls(), static_cast<int64_t>(real_dev.free_calls())));
    if (report_u64(ours, "device_mallocs") != static_cast<uint64_t>(s.num_device_alloc))
      return mismatch(step, differ("num_device_alloc", report_u64(ours, "device_mallocs"), s.num_device_alloc));
    if (report_u64(ours, "device_frees") != static_cast<uint64_t>(s.num_device_free))
      return mismatch(step, differ("num_device_free", report_u64(ours, "device_frees"), s.num_device_free));
    if (report_u64(ours, "num_alloc_retries") != static_cast<uint64_t>(s.num_alloc_retries))
      return mismatch(step, differ("num_alloc_retries", report_u64(ours, "num_alloc_retries"), s.num_alloc_retries));
    if (report_u64(ours, "num_sync_all_streams") != static_cast<uint64_t>(s.num_sync_all_streams))
      return mismatch(step,
                      differ("num_sync_all_streams", report_u64(ours, "num_sync_all_streams"), s.num_sync_all_streams));
    if (ours.stats().num_ooms != static_cast<uint64_t>(s.num_ooms))
      return mismatch(step, differ("num_ooms", ours.stats().num_ooms, s.num_ooms));
  }
  r.streams = static_cast<int>(streams.size());
  finish();
  for (const auto& [id, at] : live) ours.deallocate(at);  // the real allocator frees its own when it goes
  return done();
}

}  // namespace dlsim::upstream
