#include "policies/pool/cnmem_pool.h"

#include <stdexcept>

#include "common/config_error.h"
#include "policies/pool/pool_accounting.h"

namespace dlsim {

const ParamBindings<CnmemOptions>& CnmemOptions::parameters() {
  using O = CnmemOptions;
  static const auto b = ParamBindings<O>()
      .add("init_size_mb", &O::init_size_bytes, mebibytes(),
           "MiB cnmemInit reserves up front (0: cnmem's default, half the device memory)",
           ParamCheck::in_range(0, kMaxMebibytes))
      .add("cannot_grow", &O::cannot_grow, "CNMEM_FLAGS_CANNOT_GROW: the root never cudaMallocs after init")
      .add("cannot_steal", &O::cannot_steal, "CNMEM_FLAGS_CANNOT_STEAL: no stealing between stream managers")
      .add("stream_children", &O::stream_children,
           "one child manager per non-zero stream (cnmemRegisterStream); false: all streams use the root");
  return b;
}

CnmemPool::CnmemPool(DeviceMemory& device, const CnmemOptions& options) : device_(device), options_(options) {
  root_.is_root = true;
  // cnmemInit: size 0 means totalGlobalMem / 2 (the whole device's, not what is left after the context), and it
  // accepts 0 < size < totalGlobalMem only; a size that passes but does not fit fails in cudaMalloc below.
  const uint64_t total = device.total_global_mem();
  uint64_t size = options.init_size_bytes == 0 ? total / 2 : options.init_size_bytes;
  if (size == 0 || size >= total)
    throw ConfigError("", 0, "init_size_mb",
                      "cnmem: the initial reservation (" + std::to_string(size) +
                          " B) must be below the device's total memory (" + std::to_string(total) + " B)");
  size = round_up(size, kGranularity);
  auto p = device_.malloc(size);
  if (!p)
    throw ConfigError("", 0, "init_size_mb",
                      "cnmem: cudaMalloc of the initial reservation (" + std::to_string(size) + " B) failed");
  ++device_mallocs_;
  reserved_ = initial_reservation_ = size;
  root_.free.emplace(*p, Block{size, true});
}

CnmemPool::Manager& CnmemPool::manager_for(int stream) {
  if (stream == 0 || !options_.stream_children) return root_;
  auto it = child_by_stream_.find(stream);
  if (it != child_by_stream_.end()) return *it->second;
  children_.push_back(std::make_unique<Manager>());
  Manager& child = *children_.back();
  child.stream = stream;
  child_by_stream_.emplace(stream, &child);
  return child;
}

std::map<DevPtr, CnmemPool::Block>::iterator CnmemPool::best_fit(Manager& m, uint64_t size) {
  // A linear scan like cnmem's: the smallest block that fits; a strict comparison keeps the lowest address.
  auto best = m.free.end();
  for (auto it = m.free.begin(); it != m.free.end(); ++it)
    if (it->second.size >= size && (best == m.free.end() || it->second.size < best->second.size)) best = it;
  return best;
}

std::pair<DevPtr, CnmemPool::Block> CnmemPool::extract(Manager& m, std::map<DevPtr, Block>::iterator it,
                                                       uint64_t size, bool stolen) {
  const DevPtr p = it->first;
  const Block b = it->second;
  auto hint = m.free.erase(it);
  if (b.size > size) m.free.emplace_hint(hint, p + size, Block{b.size - size, stolen});
  return {p, Block{size, b.head}};
}

bool CnmemPool::grow(Manager& m, uint64_t size) {
  std::optional<DevPtr> p;
  if (m.is_root) {
    if (options_.cannot_grow) return false;
    p = device_.malloc(size);  // exactly the rounded request: cnmem never over-allocates
    if (!p) {
      ++failed_device_mallocs_;
      return false;
    }
    ++device_mallocs_;
    reserved_ += size;
  } else {
    ++stream_syncs_;  // the root synchronises its stream before granting to a non-blocking child
    p = manager_allocate(root_, size);
    if (!p) return false;
    ++parent_grants_;
  }
  m.free.emplace(*p, Block{size, true});
  return true;
}

std::optional<DevPtr> CnmemPool::manager_allocate(Manager& m, uint64_t size) {
  auto it = best_fit(m, size);
  if (it == m.free.end()) {
    if (!grow(m, size)) return std::nullopt;
    it = best_fit(m, size);
  }
  auto [p, block] = extract(m, it, size, false);
  m.used.emplace(p, block);
  return p;
}

void CnmemPool::release(Manager& m, DevPtr p) {
  auto u = m.used.find(p);
  if (u == m.used.end()) throw std::logic_error("cnmem: release of a block its manager does not hold");
  const Block b = u->second;
  m.used.erase(u);
  auto next = m.free.lower_bound(p);
  auto cur = m.free.end();
  if (next != m.free.begin() && !b.head) {  // merge into the predecessor unless this block starts a region
    auto prev = std::prev(next);
    if (prev->first + prev->second.size == p) {
      prev->second.size += b.size;
      cur = prev;
    }
  }
  if (cur == m.free.end()) cur = m.free.emplace_hint(next, p, b);
  if (next != m.free.end() && cur->first + cur->second.size == next->first && !next->second.head) {
    cur->second.size += next->second.size;
    m.free.erase(next);
  }
}

std::optional<DevPtr> CnmemPool::steal_from_children(uint64_t size) {
  for (auto& child : children_) {
    ++stream_syncs_;  // the donor synchronises its stream before giving a block away
    auto it = best_fit(*child, size);
    if (it == child->free.end()) continue;
    const DevPtr data = extract(*child, it, size, true).first;
    // The root's record of what it granted to that child is split around the stolen piece.
    auto g = root_.used.upper_bound(data);
    if (g == root_.used.begin()) throw std::logic_error("cnmem: stolen block outside every grant");
    --g;
    if (g->first + g->second.size < data + size) throw std::logic_error("cnmem: stolen block outside its grant");
    const uint64_t before = data - g->first;
    const uint64_t after = g->second.size - before - size;
    if (before == 0) {
      g->second.size = size;
    } else {
      g->second.size = before;
      root_.used.emplace(data, Block{size, false});
    }
    if (after > 0) root_.used.emplace(data + size, Block{after, false});
    return data;
  }
  return std::nullopt;
}

std::optional<DevPtr> CnmemPool::steal(Manager& thief, uint64_t size) {
  if (options_.cannot_steal || children_.empty()) return std::nullopt;
  auto data = steal_from_children(size);  // a child steals from its siblings through the root
  if (!data) return std::nullopt;
  ++steals_;
  if (thief.is_root) {
    root_.used[*data].head = true;
  } else {
    thief.used.emplace(*data, Block{size, true});
  }
  return data;
}

std::optional<DevPtr> CnmemPool::allocate(const AllocRequest& req) {
  const uint64_t size = round_up(at_least_one_byte(req.bytes), kGranularity);
  Manager& m = manager_for(req.stream);
  auto p = manager_allocate(m, size);
  if (!p) p = steal(m, size);
  if (!p) {
    ++stats_.num_ooms;
    return std::nullopt;
  }
  live_.emplace(*p, Live{&m, req.bytes, size});
  note_alloc(stats_, req.bytes, size);
  return p;
}

void CnmemPool::deallocate(DevPtr p) {
  auto it = live_.find(p);
  if (it == live_.end()) throw std::logic_error("cnmem: free of an address it did not allocate");
  const Live l = it->second;
  live_.erase(it);
  release(*l.owner, p);
  note_free(stats_, l.requested, l.size);
}

nlohmann::json CnmemPool::report() const {
  uint64_t largest_root_free = 0, free_bytes = 0;
  for (const auto& [p, b] : root_.free) {
    largest_root_free = std::max(largest_root_free, b.size);
    free_bytes += b.size;
  }
  for (const auto& child : children_)
    for (const auto& [p, b] : child->free) free_bytes += b.size;
  return {{"reserved_bytes", reserved_},
          {"initial_reservation_bytes", initial_reservation_},
          {"device_mallocs", device_mallocs_},
          {"failed_device_mallocs", failed_device_mallocs_},
          {"managers", 1 + children_.size()},
          {"parent_grants", parent_grants_},
          {"steals", steals_},
          {"stream_syncs", stream_syncs_},
          {"free_bytes", free_bytes},
          {"root_free_blocks", root_.free.size()},
          {"root_largest_free_block", largest_root_free}};
}

void register_cnmem(PoolRegistry& r) {
  r.add({"cnmem", "NVIDIA cnmem: 512 B best fit, address-ordered free list, per-stream managers, never releases",
         CnmemOptions::parameters().specs(), [](const Params& p, DeviceMemory& d) -> std::unique_ptr<PoolPolicy> {
           return std::make_unique<CnmemPool>(d, CnmemOptions::parameters().from_params(p));
         }});
}

}  // namespace dlsim
