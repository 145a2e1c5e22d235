#pragma once
// Stand-in for c10/util/hash.h (upstream replay): a 64-bit mix for the allocator's mutex shards (any mix works:
// it only picks a shard).
#include <cstdint>
namespace c10 {
inline uint64_t twang_mix64(uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return key;
}
}  // namespace c10
