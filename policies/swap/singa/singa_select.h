#pragma once
// Which variables SINGA's SwapGPU swaps (notes singa-memory-management.md sections 4.2, 4.3; the reference
// code is SwapGPU::Plan and its helpers in apache/singa PR #412, src/core/device/swap_gpu.cc L337-401 and
// L688-709 at commit 8e8a7e15).
//
// Candidates: for each pair of consecutive accesses of one block (r, d) that straddles the load peak
// (r < max_idx < d), of at least `min_bytes` (1 MiB in SINGA), whose earlier record is a Read or a Write (not
// the Malloc). The later record is an access too here: in the graph a block is freed right after its last
// access, so a (last access, Free) pair never straddles the peak anyway. The swap-out may start at the ready
// index: r + 4 after a Read, r + 6 after a Write (SINGA's data_buffer and mutable_data_buffer margins; its
// A1 category, a Layer marker with margin 0, is never recorded in the final code).
//
// Scores, with T_out and T_in the line's copy times of the block:
//   DOA_origin = t(d) - t(r)                    the raw duration of absence
//   DOA        = DOA_origin - T_out - T_in      what is left after the transfers. The reference code
//                                               subtracts T_out twice; out + in is what it means.
//   AOA        = DOA * bytes if DOA >= 0, else DOA / bytes
//   WDOA       = sum over indices j in [r, d) of (load(j) - limit). The reference code accumulates into a
//                copy and indexes the load by the wrong variable, so its WDOA is always 0; this is the
//                definition the code was written for.
// Rankings: doa (DOA_origin), aoa, wdoa, each descending; vote (SINGA's majority_voting, its final default):
// the sum of a candidate's positions under the three, ascending. Ties keep index order.
// Selection: down the ranking, remove each candidate's bytes from a working copy of the load over
// [ready, d) (the instant-swap model) until the working peak is below the limit.
#include <cstdint>
#include <string>
#include <vector>

#include "policies/swap/core/copy_time_line.h"
#include "policies/swap/singa/singa_trace.h"

namespace dlsim {

enum class SingaRank : uint8_t { Doa, Aoa, Wdoa, Vote };

struct SwapCandidate {
  TensorId tensor = kNoTensor;
  uint64_t bytes = 0;
  int r = 0, d = 0;  // indices of the accesses before and after the absence
  int ready = 0;     // the earliest index at which the swap-out may start
  TimeNs doa_origin = 0;
  double doa = 0, aoa = 0, wdoa = 0;
};

constexpr int kSingaReadReady = 4;   // data_buffer (device.h L377)
constexpr int kSingaWriteReady = 6;  // mutable_data_buffer (device.h L378)

std::vector<SwapCandidate> singa_candidates(const SingaTrace& trace, const CopyTimeLine& copy, uint64_t min_bytes,
                                            uint64_t limit);
// Candidate indices in the order the ranking visits them.
std::vector<size_t> singa_ranking(const std::vector<SwapCandidate>& c, SingaRank rank);

struct SingaSelection {
  std::vector<SwapCandidate> chosen;
  uint64_t ideal_peak = 0;  // the working load's peak after the last choice (the instant-swap model)
  bool met = false;         // ideal_peak < limit
};
SingaSelection singa_select(const SingaTrace& trace, const std::vector<SwapCandidate>& c,
                            const std::vector<size_t>& ranking, uint64_t limit);

}  // namespace dlsim
