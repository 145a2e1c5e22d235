// PyTorch's expandable_segments:True (c10/cuda/CUDACachingAllocator.cpp, ExpandableSegment and the allocator's
// find_expandable_block / map_block / unmap_block), on DeviceMemory's virtual-memory calls:
// - a segment is one address range per (stream, pool) of ceil(1.125 x totalGlobalMem / page) pages, reserved on
//   the first miss of that stream and pool; page = 2 MiB (small pool) or 20 MiB (large pool), one physical
//   allocation (cuMemCreate + cuMemMap) each;
// - a miss maps pages at the lowest address where free and unmapped space together fit the request (holes left
//   by earlier unmapping first, else the end of the mapped part), so the segment tends to stay one block; the
//   newly mapped block merges with free mapped neighbours. Mapping is all or nothing per map_block, as in
//   ExpandableSegment::map (pages created before a failing one are released);
// - the request is the rounded size (no 2/20 MiB segment rounding): only the pages it needs are mapped;
// - empty_cache and the out-of-memory retry unmap every page that no live block touches (PyTorch synchronizes
//   the segment's stream first) and give back the address range of a segment that has nothing mapped left.
// Mapped bytes count as reserved (total_allocated_memory). Not modelled: IPC sharing, peer access.
#include <algorithm>
#include <memory>
#include <stdexcept>

#include "policies/pool/pytorch_caching_pool.h"

namespace dlsim {

PytorchCachingPool::Block* PytorchCachingPool::try_allocate_expandable_block(BlockPool& pool, int stream,
                                                                             uint64_t size) {
  Block* c = find_expandable_block(pool, stream, size);
  if (!c) return nullptr;
  // c starts a run of free and unmapped blocks with room for `size`: unmapped..., or free -> unmapped -> ...
  if (!c->mapped && !map_block(pool, c, std::min(c->size, size))) return nullptr;
  while (c->size < size) {
    // c is free and mapped, its next neighbour unmapped: mapping that merges the two (the next one survives).
    Block* n = c->next;
    if (!map_block(pool, n, std::min(size - c->size, n->size))) return nullptr;
    c = n;
  }
  pool.blocks.erase(c);
  return c;
}

PytorchCachingPool::Block* PytorchCachingPool::find_expandable_block(BlockPool& pool, int stream, uint64_t size) {
  auto allocatable = [](const Block* b) { return b && !b->allocated; };
  auto has_room = [&](const Block* b) {
    uint64_t bytes = 0;
    for (; bytes < size && allocatable(b); b = b->next) bytes += b->size;
    return bytes >= size;
  };
  Block key;
  key.stream = stream;
  for (auto it = pool.unmapped.lower_bound(&key); it != pool.unmapped.end() && (*it)->stream == stream; ++it) {
    Block* c = *it;
    if (allocatable(c->prev)) c = c->prev;  // a free block just below the unmapped range counts too
    if (has_room(c)) return c;
  }
  // No segment of this stream and pool has room: reserve a new one.
  const uint64_t page = pool.small ? kSmallBuffer : kLargeBuffer;
  // Sized from cudaDeviceProp::totalGlobalMem (the whole device), not from what the device offers the pool.
  const uint64_t total = device_.total_global_mem();
  // ExpandableSegment's max_handles = ceil((total + total / 8) / page), written so it cannot overflow.
  const uint64_t pages = total / page + (total % page + total / 8 + page - 1) / page;
  const uint64_t va = pages * page;
  auto base = device_.reserve_address_range(va);
  if (!base) return nullptr;
  auto seg = std::make_unique<ExpandableSegment>();
  seg->base = *base;
  seg->size = va;
  seg->page = page;
  Block* c = new_block(*base, va, stream, pool.small);
  c->segment = seg.get();
  c->mapped = false;
  segments_by_base_.emplace(*base, std::move(seg));
  pool.unmapped.insert(c);
  return c;
}

bool PytorchCachingPool::map_block(BlockPool& pool, Block* b, uint64_t size) {
  ExpandableSegment& s = *b->segment;
  // Unmapped ranges start and end on page boundaries; map the pages covering [b->ptr, b->ptr + size).
  const uint64_t first = (b->ptr - s.base) / s.page;
  const uint64_t last = (b->ptr - s.base + size + s.page - 1) / s.page;
  for (uint64_t i = first; i < last; ++i) {
    if (!device_.map_pages(s.base + i * s.page, s.page)) {
      for (uint64_t j = first; j < i; ++j) device_.unmap_pages(s.base + j * s.page, s.page);
      return false;
    }
  }
  const uint64_t mapped = (last - first) * s.page;
  pool.unmapped.erase(b);
  b->mapped = true;
  if (mapped < b->size) {
    // b -> rest (still unmapped) -> b's old next
    Block* rest = new_block(b->ptr + mapped, b->size - mapped, b->stream, b->small);
    rest->segment = b->segment;
    rest->mapped = false;
    rest->prev = b;
    rest->next = b->next;
    if (rest->next) rest->next->prev = rest;
    b->next = rest;
    b->size = mapped;
    pool.unmapped.insert(rest);
  }
  try_merge_blocks(pool, b, b->prev);
  try_merge_blocks(pool, b, b->next);
  insert_free(pool, b);
  s.mapped += mapped;
  reserved_ += mapped;
  ++device_mallocs_;  // PyTorch counts a segment map as num_device_alloc
  ++segment_maps_;
  return true;
}

void PytorchCachingPool::unmap_block(BlockPool& pool, Block* b) {
  ExpandableSegment& s = *b->segment;
  // Only whole pages inside the free block: its edges may share a page with a live neighbour.
  const uint64_t first = (b->ptr - s.base + s.page - 1) / s.page;
  const uint64_t last = (b->ptr - s.base + b->size) / s.page;
  if (first >= last) return;
  for (uint64_t i = first; i < last; ++i) device_.unmap_pages(s.base + i * s.page, s.page);
  const DevPtr start = s.base + first * s.page;
  const uint64_t bytes = (last - first) * s.page;
  pool.blocks.erase(b);
  const DevPtr old_ptr = b->ptr;
  const uint64_t before = start - old_ptr;
  const uint64_t after = b->size - before - bytes;
  if (before > 0) {
    rekey(b, start);
    // prev -> mapped free head -> b
    Block* head = new_block(old_ptr, before, b->stream, b->small);
    head->segment = b->segment;
    head->prev = b->prev;
    if (head->prev) head->prev->next = head;
    head->next = b;
    b->prev = head;
    insert_free(pool, head);
  }
  if (after > 0) {
    // b -> mapped free tail -> next
    Block* tail = new_block(start + bytes, after, b->stream, b->small);
    tail->segment = b->segment;
    tail->next = b->next;
    if (tail->next) tail->next->prev = tail;
    tail->prev = b;
    b->next = tail;
    insert_free(pool, tail);
  }
  b->size = bytes;
  b->mapped = false;
  try_merge_blocks(pool, b, b->prev);
  try_merge_blocks(pool, b, b->next);
  pool.unmapped.insert(b);
  s.mapped -= bytes;
  reserved_ -= bytes;
  ++device_frees_;  // PyTorch counts a segment unmap as num_device_free
  ++segment_unmaps_;
}

void PytorchCachingPool::release_expandable_segment(BlockPool& pool, Block* b) {
  if (b->mapped || b->allocated || b->size != b->segment->size)
    throw std::logic_error("pytorch-caching: releasing an expandable segment that is still in use");
  const DevPtr base = b->segment->base;
  pool.unmapped.erase(b);
  device_.release_address_range(base);
  delete_block(b);
  segments_by_base_.erase(base);
}

}  // namespace dlsim
