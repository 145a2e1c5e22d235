#pragma once
// When SINGA's SwapGPU swaps the variables it chose (notes singa-memory-management.md section 4.4; reference
// code swap_gpu.cc L418-533 at commit 8e8a7e15). Swap-outs share one serial D2H stream, swap-ins one serial
// H2D stream; the two directions overlap.
// - Swap-outs in increasing r: start at index max(ready, previous swap-out's end), at that index's time; end
//   at the first index whose time is >= start time + T_out. There the copy is synchronised and the device
//   block freed.
// - Swap-ins in decreasing d: finish by index min(d, next swap-in's start); start at the last index whose time
//   is <= that index's time - T_in (never before the swap-out's end). There the block is allocated and the
//   copy issued; it is synchronised at d.
// no-overhead: exactly the above; transfers hide behind the profiled timeline and the peak may stay above
//   the limit ("up to 34.2 % less memory without communication overhead").
// stick-to-limit: with the load as the schedule leaves it, a swap-out whose block would still be on the
//   device at an index where the load exceeds the limit is forced to complete there (a synchronous wait:
//   stall = its natural end time - that index's time); a swap-in that would push the load over the limit is
//   delayed to just after the last such index (stall = how late it then completes). The overhead SINGA
//   reports is the sum of these stalls; the simulator measures the real one.
// The reference's no-overhead code indexes its timeline without the +L shift the stick-to-limit code uses
// (a bug that reads the previous iteration's times); here both read the one profiled iteration.
// Changed from the reference (issue 31 item 2): a swap-in must finish before every later-needed swap-in starts
// (the H2D stream is serial in d order), so the bound carried down the chain is the earliest start so far, not the
// last swap-in's own start. In the reference a swap-in pushed late by its swap-out's end (one that then has no
// absence and is dropped, or is exposed) reset the bound, and the swap-ins needed before it were planned to
// overlap on the one stream: GoogLeNet b128 at 0.7 in no-overhead cost 13 % in the simulated run though every kept
// transfer hid on the profile; with the carried minimum it costs nothing and saves the same memory.
#include <string>
#include <vector>

#include "policies/swap/singa/singa_select.h"

namespace dlsim {

enum class SingaMode : uint8_t { NoOverhead, StickToLimit };

struct ScheduledSwap {
  SwapCandidate c;
  int out_start = 0, out_end = 0;  // indices: copy issued, copy synchronised and block freed
  int in_start = 0;                // index: block allocated and copy issued (synchronised at c.d)
  TimeNs stall_ns = 0;             // SINGA's overhead for this variable (stick-to-limit only)
  // no-overhead: how late the swap-in completes against the index that needs it, on the profiled timeline (0 when
  // the transfer hides; above 0 when the swap-out ended too late, or the serial H2D stream was busy, to start it
  // early enough)
  TimeNs exposed_ns = 0;
};

std::vector<ScheduledSwap> singa_schedule(const SingaTrace& trace, const std::vector<SwapCandidate>& chosen,
                                          const CopyTimeLine& copy, SingaMode mode, uint64_t limit);

}  // namespace dlsim
