#pragma once
// Stub of the generated protobuf classes of TSL's bfc_memory_map.proto (the memory-map dump): plain structs with
// the setters bfc_allocator.cc calls, so RecordMemoryMap() works without protobuf.
#include <cstdint>
#include <string>
#include <vector>

namespace tensorflow {
struct MemAllocatorStats {
  int64_t num_allocs = 0, bytes_in_use = 0, peak_bytes_in_use = 0, largest_alloc_size = 0;
  float fragmentation_metric = 0;
  void set_num_allocs(int64_t v) { num_allocs = v; }
  void set_bytes_in_use(int64_t v) { bytes_in_use = v; }
  void set_peak_bytes_in_use(int64_t v) { peak_bytes_in_use = v; }
  void set_largest_alloc_size(int64_t v) { largest_alloc_size = v; }
  void set_fragmentation_metric(float v) { fragmentation_metric = v; }
};
struct BinSummary {
  int32_t bin = 0;
  int64_t total_bytes_in_use = 0, total_bytes_in_bin = 0, total_chunks_in_use = 0, total_chunks_in_bin = 0;
  void set_bin(int32_t v) { bin = v; }
  void set_total_bytes_in_use(int64_t v) { total_bytes_in_use = v; }
  void set_total_bytes_in_bin(int64_t v) { total_bytes_in_bin = v; }
  void set_total_chunks_in_use(int64_t v) { total_chunks_in_use = v; }
  void set_total_chunks_in_bin(int64_t v) { total_chunks_in_bin = v; }
};
struct MemChunk {
  uint64_t address = 0;
  int64_t size = 0, requested_size = 0;
  int32_t bin = 0;
  uint64_t freed_at_count = 0;
  bool in_use = false;
  void set_address(uint64_t v) { address = v; }
  void set_size(int64_t v) { size = v; }
  void set_requested_size(int64_t v) { requested_size = v; }
  void set_bin(int32_t v) { bin = v; }
  void set_freed_at_count(uint64_t v) { freed_at_count = v; }
  void set_in_use(bool v) { in_use = v; }
};
struct MemoryDump {
  std::string allocator_name;
  MemAllocatorStats stats;
  std::vector<BinSummary> bin_summary;
  std::vector<MemChunk> chunk;
  void set_allocator_name(const std::string& v) { allocator_name = v; }
  MemAllocatorStats* mutable_stats() { return &stats; }
  BinSummary* add_bin_summary() { return &bin_summary.emplace_back(); }
  MemChunk* add_chunk() { return &chunk.emplace_back(); }
  std::string SerializeAsString() const { return allocator_name; }
};
}  // namespace tensorflow
