#pragma once
// SmartPool's detection of the repeating training iteration in its Malloc/Free trace, as in SINGA's
// SmartMemPool (notes: singa-memory-management.md 2.2): no tensor ids, only sizes and pointer reuse.
//
// Signature: a Malloc maps to its size, a Free to its block's lifetime (free index - malloc index); a Malloc
// not freed yet maps to its size. Repeat test (brute force): the longest `len` such that the segment at
// `start` equals the one at `start + len`, comparing len - 1 elements (the reference's quirk, kept: harmless);
// the smallest start wins among equal lengths. Verification: the test runs again inside the found segment and
// a repeat longer than `verify_length` (50) replaces it (the longest repeat can span several iterations).
// Accepted when the length exceeds `min_length` (100).
//
// Phase (not in the reference): any rotation of a repeat is a repeat too, and SINGA's first one need not start
// at an iteration boundary. It does not when the first iteration differs from the next (a swapped weight's first
// swap-out frees a block allocated at setup, so the iteration's Free signatures change); planning that window
// makes every activation live at its start a cross-iteration block with a backup copy (2-3x the live peak under
// swapping). quietest_phase moves the start to the rotation with the fewest bytes live, which is the iteration
// boundary in a training trace.
#include <cstdint>
#include <vector>

#include "policies/pool/pool_policy.h"

namespace dlsim {

struct TraceOp {
  bool is_malloc = true;
  DevPtr ptr = 0;     // the identity: paired with the next op on the same pointer
  uint64_t size = 0;  // for a Malloc
};

std::vector<int64_t> trace_signature(const std::vector<TraceOp>& ops);

struct Repeat {
  size_t start = 0;
  size_t length = 0;  // 0: none
};

// Longest repeat of sig[begin, end) (see above).
Repeat longest_repeat(const std::vector<int64_t>& sig, size_t begin, size_t end);

struct PatternParams {
  size_t min_length = 100;
  size_t verify_length = 50;
  bool operator==(const PatternParams&) const = default;
};

// The detected iteration (start index and length in the trace), or length 0 when none is accepted.
Repeat detect_iteration(const std::vector<TraceOp>& ops, const PatternParams& p);

// The start s in [r.start, r.start + r.length) before whose op the fewest bytes are live (allocated earlier and
// not yet freed); r.start on a tie, so that a repeat already starting at its quietest point keeps its phase.
// ops must reach r.start + r.length - 1.
size_t quietest_phase(const std::vector<TraceOp>& ops, const Repeat& r);

}  // namespace dlsim
