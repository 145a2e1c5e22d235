#pragma once
// DTR's eviction score (Kirisame et al., ICLR 2021; notes allocators-and-swap.md B8): the resident tensor with
// the smallest h = c / (m * s) is evicted, with m its bytes, s its staleness (time since its last access) and c
// a compute cost:
// - full: the cost of its producer plus those of its evicted neighbourhood e*(t): the off-device ancestors that
//   recomputing t would recompute (through off-device tensors) and the evicted descendants whose recomputation
//   would then need t (through evicted tensors), each op counted once;
// - eq: e*(t) approximated by equivalence classes: off-device tensors joined with their off-device neighbours in
//   a union-find that never splits; a class's cost is the sum of its members' costs, less those recomputed since
//   (the approximation the paper's PyTorch prototype uses; the default here);
// - local: the producer's cost alone.
// A tensor freed at its last use counts as off the device (DTR treats a deallocation as an eviction).
// `full` walks the evicted neighbourhood, which grows with what is off the device: a score is kept per tensor and
// walked again only when a tensor its walk looked at changes residency (left_device, recomputed: the changed
// tensor's reverse walk finds whose scores read it), so that an eviction costs the walks it invalidates, not one
// walk per resident tensor. The scores are the same as walking every time (dtr_heuristic_test.cc checks).
#include <cstdint>
#include <string>
#include <vector>

#include "policies/swap/core/remat_graph.h"

namespace dlsim {

enum class DtrHeuristicKind : uint8_t { Full, Eq, Local };
const char* to_string(DtrHeuristicKind k);

// Where a transient tensor is during DTR's pass.
enum class Residency : uint8_t { Unborn, Resident, Evicted, Dead };

class DtrHeuristic {
 public:
  // cache_full: keep full's scores between changes (false: walk every time, the reference for the tests).
  DtrHeuristic(const RematGraph& rg, DtrHeuristicKind kind, const std::vector<Residency>& where, bool cache_full = true);

  // c for `t` (ns); the runtime divides by m * s.
  double cost(TensorId t);
  // Every change of `where` off the device or back must be reported (full's kept scores and eq's classes follow
  // them); a tensor born resident needs no report.
  void left_device(TensorId t);  // evicted or freed at its last use
  void recomputed(TensorId t);   // back on the device by a replay

 private:
  bool off(TensorId t) const;
  TensorId find(TensorId t);
  double full_cost(TensorId t);
  void invalidate_around(TensorId x);  // full: forget the scores whose walks look at x

  const RematGraph& rg_;
  DtrHeuristicKind kind_;
  const std::vector<Residency>& where_;
  std::vector<TensorId> parent_;      // union-find (eq)
  std::vector<double> class_cost_;    // at each root (eq)
  std::vector<uint8_t> in_class_;     // joined a class (eq)
  std::vector<uint32_t> mark_;        // visit stamps (full: ops; eq: roots)
  uint32_t stamp_ = 0;
  std::vector<TensorId> stack_;
  bool cache_full_;
  std::vector<double> full_score_;         // full: the cost last walked, per tensor
  std::vector<uint8_t> full_valid_;        // ... and whether it still holds
  std::vector<uint32_t> invalidate_mark_;  // visit stamps of invalidate_around
  uint32_t invalidate_stamp_ = 0;
};

}  // namespace dlsim
