#pragma once
// PoolStats bookkeeping shared by the online pools: every pool counts live bytes the same way, so that their
// reports compare like with like.
#include <algorithm>

#include "policies/pool/pool_policy.h"
#include "common/byte_units.h"

namespace dlsim {

// A block of `allocated` bytes (after the pool's rounding and unsplit slack) now serves a request of
// `requested` bytes.
inline void note_alloc(PoolStats& s, uint64_t requested, uint64_t allocated) {
  ++s.num_allocs;
  s.allocated_bytes += allocated;
  s.requested_bytes += requested;
  s.peak_allocated_bytes = std::max(s.peak_allocated_bytes, s.allocated_bytes);
  s.peak_requested_bytes = std::max(s.peak_requested_bytes, s.requested_bytes);
}

inline void note_free(PoolStats& s, uint64_t requested, uint64_t allocated) {
  ++s.num_frees;
  s.allocated_bytes -= allocated;
  s.requested_bytes -= requested;
}

// Pools work in whole bytes; a tensor of 0 bytes still gets a distinct address, as if it were 1 byte
// (PoolPolicy's contract reserves nullopt for out-of-memory, so "no pointer" is not an option).
inline uint64_t at_least_one_byte(uint64_t bytes) { return bytes == 0 ? 1 : bytes; }

inline uint64_t round_up(uint64_t v, uint64_t multiple) { return (v + multiple - 1) / multiple * multiple; }

}  // namespace dlsim
