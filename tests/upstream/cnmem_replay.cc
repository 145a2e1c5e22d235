#include "tests/upstream/cnmem_replay.h"

#include <cnmem.h>

#include <map>
#include <set>
#include <sstream>

#include "policies/pool/virtual_device_memory.h"
#include "tests/upstream/cuda_stub/cuda_stub.h"

namespace dlsim::upstream {
namespace {

// dlsim stream s > 0 is the cudaStream_t with that value; 0 is the NULL stream, cnmem's root.
cudaStream_t stream_handle(int stream) {
  return reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(stream));
}

class RealCnmem {
 public:
  RealCnmem(const CnmemOptions& o) : children_(o.stream_children) {
    cnmemDevice_t d{};
    d.device = 0;
    d.size = o.init_size_bytes;
    unsigned flags = CNMEM_FLAGS_DEFAULT;
    if (o.cannot_grow) flags |= CNMEM_FLAGS_CANNOT_GROW;
    if (o.cannot_steal) flags |= CNMEM_FLAGS_CANNOT_STEAL;
    status_ = cnmemInit(1, &d, flags);
  }
  ~RealCnmem() {
    if (status_ == CNMEM_STATUS_SUCCESS) cnmemFinalize();
  }
  bool ok() const { return status_ == CNMEM_STATUS_SUCCESS; }

  // nullptr: CNMEM_STATUS_OUT_OF_MEMORY. Any other failure is a mismatch the caller reports.
  cnmemStatus_t allocate(void** p, uint64_t bytes, int stream) {
    cudaStream_t s = children_ ? stream_handle(stream) : nullptr;
    if (s && registered_.insert(stream).second) {
      const cnmemStatus_t r = cnmemRegisterStream(s);
      if (r != CNMEM_STATUS_SUCCESS) return r;
    }
    return cnmemMalloc(p, bytes, s);
  }
  cnmemStatus_t release(void* p, int stream) { return cnmemFree(p, children_ ? stream_handle(stream) : nullptr); }

 private:
  bool children_;
  cnmemStatus_t status_;
  std::set<int> registered_;
};

uint64_t report_u64(const PoolPolicy& p, const char* key) { return p.report()[key].get<uint64_t>(); }

}  // namespace

CnmemReplayResult replay_through_cnmem(const CnmemReplayCase& c) {
  CnmemReplayResult r;
  VirtualDeviceMemory ours_dev(c.capacity_bytes, c.total_global_mem_bytes);
  VirtualDeviceMemory real_dev(c.capacity_bytes, c.total_global_mem_bytes);
  CnmemPool ours(ours_dev, c.options);
  use_device(&real_dev);
  RealCnmem real(c.options);
  auto mismatch = [&](size_t step, const std::string& what) {
    std::ostringstream s;
    s << c.name << ": call " << step << ": " << what;
    r.first_mismatch = s.str();
    use_device(nullptr);
    return r;
  };
  if (!real.ok()) return mismatch(0, "the real cnmemInit failed where dlsim's constructor succeeded");
  if (ours_dev.reserved() != real_dev.reserved()) return mismatch(0, "initial reservations differ");

  struct Live {
    DevPtr at;
    int stream;
  };
  std::map<uint32_t, Live> live;
  std::set<int> streams;
  for (size_t step = 0; step < c.ops.size(); ++step) {
    const testing::AllocTraceOp& op = c.ops[step];
    if (op.alloc) {
      streams.insert(op.stream);
      ++r.allocations;
      auto mine = ours.allocate({op.bytes, op.stream});
      void* theirs = nullptr;
      cnmemStatus_t st = real.allocate(&theirs, op.bytes, op.stream);
      // With CNMEM_FLAGS_CANNOT_STEAL, cnmemMalloc reports a failed allocation as INVALID_ARGUMENT (stealUnsafe
      // refuses before looking); for the caller it is the same refusal.
      if (st == CNMEM_STATUS_INVALID_ARGUMENT && c.options.cannot_steal && !theirs) {
        ++r.refused_as_invalid_argument;
        st = CNMEM_STATUS_OUT_OF_MEMORY;
      }
      if (st != CNMEM_STATUS_SUCCESS && st != CNMEM_STATUS_OUT_OF_MEMORY)
        return mismatch(step, std::string("the real cnmem failed: ") + cnmemGetErrorString(st));
      if (mine.has_value() != (st == CNMEM_STATUS_SUCCESS))
        return mismatch(step, std::string("alloc of ") + std::to_string(op.bytes) + " B: " +
                                  (mine ? "dlsim allocated, cnmem ran out of memory"
                                        : "cnmem allocated, dlsim ran out of memory"));
      if (!mine) {
        ++r.ooms;
        continue;
      }
      if (*mine != stub_offset(theirs))
        return mismatch(step, "alloc of " + std::to_string(op.bytes) + " B on stream " + std::to_string(op.stream) +
                                  ": dlsim at " + std::to_string(*mine) + ", cnmem at " +
                                  std::to_string(stub_offset(theirs)));
      live.emplace(op.id, Live{*mine, op.stream});
    } else {
      auto it = live.find(op.id);
      if (it == live.end()) continue;  // its allocation ran out of memory in both
      ++r.frees;
      ours.deallocate(it->second.at);
      const cnmemStatus_t st = real.release(stub_pointer(it->second.at), it->second.stream);
      if (st != CNMEM_STATUS_SUCCESS) return mismatch(step, std::string("cnmemFree failed: ") + cnmemGetErrorString(st));
      live.erase(it);
    }
    const StubRuntimeCalls& calls = stub_calls();
    // The stub counts cnmemInit's reservation too, as dlsim's device_mallocs does.
    const uint64_t our_mallocs = report_u64(ours, "device_mallocs") + report_u64(ours, "failed_device_mallocs");
    if (ours_dev.reserved() != real_dev.reserved())
      return mismatch(step, "reserved " + std::to_string(ours_dev.reserved()) + " B vs cnmem's " +
                                std::to_string(real_dev.reserved()));
    if (our_mallocs != calls.malloc_calls)
      return mismatch(step, "cudaMalloc calls " + std::to_string(our_mallocs) + " vs cnmem's " +
                                std::to_string(calls.malloc_calls));
    if (report_u64(ours, "stream_syncs") != calls.stream_syncs)
      return mismatch(step, "cudaStreamSynchronize calls " + std::to_string(report_u64(ours, "stream_syncs")) +
                                " vs cnmem's " + std::to_string(calls.stream_syncs));
  }
  r.cuda_mallocs = stub_calls().malloc_calls;
  r.stream_syncs = stub_calls().stream_syncs;
  r.steals = report_u64(ours, "steals");
  r.peak_reserved = real_dev.peak_reserved();
  r.streams = static_cast<int>(streams.size());
  for (const auto& [id, l] : live) {
    ours.deallocate(l.at);
    real.release(stub_pointer(l.at), l.stream);
  }
  return r;
}

}  // namespace dlsim::upstream
