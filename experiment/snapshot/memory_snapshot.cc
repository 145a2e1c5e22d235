#include "experiment/snapshot/memory_snapshot.h"

#include <map>
#include <optional>
#include <stdexcept>

#include "common/atomic_file.h"
#include "experiment/snapshot/pickle_writer.h"
#include "common/config_error.h"

namespace dlsim {

namespace {

using json = nlohmann::json;
using Kind = AllocationEvent::Kind;

struct LiveBlock {
  uint64_t bytes = 0;
  TensorId tensor = kNoTensor;
  int iteration = 0;
  int stream = 0;
  bool awaiting_free = false;  // free_requested, not yet back in the pool
};

struct Segment {
  uint64_t bytes = 0;
  int stream = 0;
  bool expandable = false;
};

json frames_of(const Graph& g, TensorId t, int iteration) {
  const Tensor& tensor = g.tensor(t);
  return json::array({json{{"name", tensor.name}, {"filename", to_string(tensor.kind)}, {"line", iteration}}});
}

class Builder {
 public:
  Builder(const Trace& trace, const Graph& graph, int iterations) : g_(graph) {
    for (const MemRecord& m : trace.mem) {
      if (m.iteration >= iterations) break;  // teardown: after the snapshot
      mem_.push_back(&m);
    }
  }

  void run(const AllocationLog& log) {
    for (const AllocationEvent& e : log.events()) {
      if (e.kind == Kind::PoolAllocate || e.kind == Kind::PoolDeallocate) flush_alloc();
      if (!step(e)) break;
    }
    flush_alloc();
  }

  json snapshot() const {
    json segments = json::array();
    // Mapped pages side by side form one expandable segment, as PyTorch's expandable segments grow in place.
    std::vector<std::pair<DevPtr, Segment>> merged;
    for (const auto& [addr, s] : segments_) {
      if (!merged.empty() && s.expandable && merged.back().second.expandable &&
          merged.back().first + merged.back().second.bytes == addr)
        merged.back().second.bytes += s.bytes;
      else
        merged.emplace_back(addr, s);
    }
    for (const auto& [addr, s] : merged) {
      json blocks = json::array();
      uint64_t at = addr, active = 0;
      const uint64_t end = addr + s.bytes;
      auto gap = [&](uint64_t to) {
        if (to > at) blocks.push_back({{"address", at}, {"size", to - at}, {"requested_size", 0}, {"state", "inactive"},
                                       {"frames", json::array()}});
      };
      for (auto it = live_.lower_bound(addr); it != live_.end() && it->first < end; ++it) {
        const LiveBlock& b = it->second;
        if (it->first < at || it->first + b.bytes > end)
          throw std::logic_error("memory snapshot: tensor at " + std::to_string(it->first) + " overlaps segment ends");
        gap(it->first);
        blocks.push_back({{"address", it->first},
                          {"size", b.bytes},
                          {"requested_size", b.bytes},
                          {"state", b.awaiting_free ? "active_pending_free" : "active_allocated"},
                          {"frames", frames_of(g_, b.tensor, b.iteration)}});
        active += b.bytes;
        at = it->first + b.bytes;
      }
      gap(end);
      segments.push_back({{"device", 0},
                          {"address", addr},
                          {"total_size", s.bytes},
                          {"allocated_size", active},
                          {"active_size", active},
                          {"requested_size", active},
                          {"stream", s.stream},
                          {"segment_type", s.bytes > (uint64_t{1} << 20) ? "large" : "small"},
                          {"segment_pool_id", json::array({0, 0})},
                          {"is_expandable", s.expandable},
                          {"frames", json::array()},
                          {"blocks", std::move(blocks)}});
    }
    json out;
    out["segments"] = std::move(segments);
    out["device_traces"] = json::array({trace_});
    out["allocator_settings"] = json::object();
    return out;
  }

 private:
  // Emits the trace's records up to and including the next one `want` accepts; false when the snapshot's
  // records end first.
  template <class Want>
  bool advance(Want want) {
    while (k_ < mem_.size()) {
      const MemRecord& m = *mem_[k_++];
      now_ = m.time;
      if (m.action == MemAction::Alloc) {
        if (!want(m)) throw std::logic_error("memory snapshot: the trace's allocs and the pool's calls disagree");
        return true;
      }
      const auto it = live_.find(m.address);
      if (it == live_.end()) throw std::logic_error("memory snapshot: free of an address not allocated");
      it->second.awaiting_free = true;
      add_entry("free_requested", m.address, it->second.bytes, it->second.stream, &it->second);
      if (want(m)) return true;
    }
    return false;
  }

  bool step(const AllocationEvent& e) {
    switch (e.kind) {
      case Kind::PoolAllocate: {
        if (!e.ok) {  // its device calls (freeing cached blocks) happen at the next record's time
          if (k_ < mem_.size()) now_ = mem_[k_]->time;
          return true;
        }
        if (!advance([](const MemRecord& m) { return m.action == MemAction::Alloc; })) return false;
        const MemRecord& m = *mem_[k_ - 1];
        if (m.address != e.address) throw std::logic_error("memory snapshot: alloc address mismatch");
        // The cudaMallocs the allocate made are logged after it: its alloc entry waits for them (flush_alloc), as
        // PyTorch's segment_alloc precedes the alloc it serves.
        pending_ = m.address;
        live_[m.address] = {m.bytes, m.tensor, m.iteration, e.stream, false};
        return true;
      }
      case Kind::PoolDeallocate: {
        auto it = live_.find(e.address);
        if (it == live_.end() || !it->second.awaiting_free) {
          // A free whose record is still ahead (on one stream: the very next record).
          if (!advance([&](const MemRecord& m) { return m.action == MemAction::Free && m.address == e.address; }))
            return false;
          it = live_.find(e.address);
        } else if (k_ < mem_.size()) {
          now_ = mem_[k_]->time;  // held for other streams: returned at the next alloc, which comes next
        }
        add_entry("free_completed", e.address, it->second.bytes, it->second.stream, &it->second);
        live_.erase(it);
        return true;
      }
      case Kind::DeviceMalloc:
      case Kind::DeviceMap:
        segments_[e.address] = {e.bytes, e.stream, e.kind == Kind::DeviceMap};
        add_entry(e.kind == Kind::DeviceMalloc ? "segment_alloc" : "segment_map", e.address, e.bytes, e.stream, nullptr);
        return true;
      case Kind::DeviceFree:
      case Kind::DeviceUnmap:  // may release several mappings side by side: all of [address, address + bytes)
        if (e.kind == Kind::DeviceFree)
          segments_.erase(e.address);
        else
          segments_.erase(segments_.lower_bound(e.address), segments_.lower_bound(e.address + e.bytes));
        add_entry(e.kind == Kind::DeviceFree ? "segment_free" : "segment_unmap", e.address, e.bytes, e.stream, nullptr);
        return true;
    }
    return true;
  }

  void flush_alloc() {
    if (!pending_) return;
    const LiveBlock& b = live_.at(*pending_);
    add_entry("alloc", *pending_, b.bytes, b.stream, &b);
    pending_.reset();
  }

  void add_entry(const char* action, DevPtr addr, uint64_t bytes, int stream, const LiveBlock* b) {
    trace_.push_back({{"action", action},
                      {"addr", addr},
                      {"size", bytes},
                      {"stream", stream},
                      {"time_us", now_ / 1000},
                      {"frames", b ? frames_of(g_, b->tensor, b->iteration) : json::array()}});
  }

  const Graph& g_;
  std::vector<const MemRecord*> mem_;
  size_t k_ = 0;
  TimeNs now_ = 0;
  std::optional<DevPtr> pending_;  // an allocate whose alloc entry waits for the device calls it made
  std::map<DevPtr, LiveBlock> live_;
  std::map<DevPtr, Segment> segments_;
  json trace_ = json::array();
};

}  // namespace

json memory_snapshot(const Trace& trace, const Graph& graph, const AllocationLog& log, int iterations) {
  Builder b(trace, graph, iterations);
  b.run(log);
  return b.snapshot();
}

void write_memory_snapshot(const std::string& path, const RunArtifacts& artifacts, int iterations) {
  const std::string bytes = to_pickle(memory_snapshot(artifacts.trace, artifacts.graph, artifacts.allocations, iterations));
  write_file_atomically(path, bytes, "--memory-snapshot");
}

}  // namespace dlsim
