#pragma once
// Capuchin's choice (Peng et al., ASPLOS 2020; notes allocators-and-swap.md B4) made on the profiled iteration:
// while the load peak is over the budget, every tensor on the device across the peak and unused there is a
// candidate, to be off the device between its accesses around the peak (Capuchin's evicted-access and
// back-access). Its swap is hidden when it is off the device across this peak at no stall with the link to itself
// (out by the end of the op before the peak, back in from the peak op's end before the back-access), which
// implies Capuchin's FreeTime = (back-access start - copy-in time) - (evicted-access end + copy-out time) >= 0.
// Hidden swaps go first, largest FreeTime first (Capuchin's order), the first few checked against the copies
// already planned with the timeline estimate (swap_timeline.h): the first without a stall is taken. Without one,
// each candidate's overhead is the smaller of its swap's stall (as probed, else alone on the link) and its
// recomputation's time (the profiled time of the ops replayed: its producer, after any input that is dead by
// then, from tensors in memory: Capuchin's recomputation source), and the candidate saving the most bytes per
// second of overhead (MSPS) is taken with the cheaper of the two; a swap the timeline then shows stalling longer
// than its recomputation would take is recomputed instead.
// The load is counted as ProgramLoad counts it (program_load.h), replays' peaks included.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "policies/swap/core/copy_time_line.h"
#include "policies/swap/core/remat_graph.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

struct CapuchinChoice {
  SwapPlan plan;
  uint64_t peak_bytes = 0;
  uint64_t shortfall_bytes = 0;  // the peak's excess over the budget when no candidate was left
  int hidden_swaps = 0;
  int replayed_ops = 0;
  TimeNs recompute_ns = 0;
  TimeNs swap_overhead_ns = 0;   // estimated stalls of the swaps taken
};

class CapuchinSelector {
 public:
  CapuchinSelector(const RematGraph& rg, const IterationProfile& profile, const std::vector<int>& stream_of,
                  const CopyTimeLine& copy, uint64_t min_bytes);
  CapuchinChoice plan(uint64_t budget);

 private:
  struct Candidate {
    TensorId t = kNoTensor;
    int e = -1, b = -1;          // evicted-access and back-access positions
    TimeNs free_time = 0;        // of its swap
    TimeNs swap_ns = 0;          // its swap's stall alone on the link, off the device across the peak
    bool can_swap = false;
    std::vector<int> replay;     // positions to replay, in order (empty: cannot recompute)
    TimeNs replay_ns = 0;
  };
  std::vector<Candidate> candidates(int peak_pos) const;
  bool off_at(TensorId t, int pos) const;
  bool touched_by_replay(TensorId t, int from, int to) const;
  bool plan_replay(Candidate& c) const;
  TimeNs swap_stall_with(const SwapAction& a) const;
  SwapAction swap_action(const Candidate& c, int peak_pos) const;
  void take_swap(const SwapAction& a);
  void take_recompute(const Candidate& c);
  void update_replay_peak(int before);
  void update_replay_peaks(int from, int to);
  uint64_t effective(int pos) const;

  const RematGraph& rg_;
  const IterationProfile& profile_;
  const std::vector<int>& stream_of_;
  CopyTimeLine copy_;
  uint64_t min_bytes_;
  std::vector<int64_t> load_;                          // with the plan's gaps
  std::vector<int64_t> replay_extra_;                  // a replay's peak over load_ at its position (0: none)
  std::vector<uint64_t> born_bytes_;                   // transient bytes first used at each position
  std::vector<std::vector<std::pair<int, int>>> off_;  // per tensor: positions without its data on the device
  std::vector<std::vector<int>> touched_;              // per tensor: `before` of replays reading or writing it
  std::map<int, size_t> at_before_;                    // recomputation index by its position
  SwapPlan plan_;
  CapuchinChoice out_;
};

}  // namespace dlsim
