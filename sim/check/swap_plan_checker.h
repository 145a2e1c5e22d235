#pragma once
// An independent check of a swapped run: it reads only the lowered Program and the trace of what ran, not the
// policy that planned it, and reports every violation it finds (empty: none).
// - Data, in host order (the Program): a tensor's memory is current after its first allocation in an
//   iteration (or setup), after a launch writes it, or after a copy-in; stale after any later allocation
//   until a copy-in fills it. A launch may touch only current tensors ("used while off the device"), a
//   copy-out needs a current tensor, and a copy-in needs a host copy that is current (a copy-out with no
//   write since). An op launched again in an iteration (recomputed) must read the values it read at its first
//   launch there (persistent state it updates in place aside), so that it writes the same values again; a
//   launch marked Command::replay reads Graph::replay_inputs (FSDP's regathered copy of a gathered parameter).
// - Time, in the trace's last iteration: each copy-in ends before the first launch that reads the tensor
//   after it starts ("not back before its use"); each copy-out starts after the last launch that wrote the
//   tensor before it ends, and ends before any device work touches memory that reuses the tensor's freed
//   address range. Every launch starts after the launch that last wrote each tensor it reads has ended.
// - Host step (HostCompute): the tensors host ops touch have a host copy from the start; a host op reads only
//   current host copies holding the newest value, and its writes make the host copy current with a new value. A
//   device read of a tensor a host op wrote must see the newest value, or one step older where the Program declares
//   delayed_host_update. In time: a host op starts after the copy to the host of what it reads has ended, a copy
//   back starts after the host op that wrote the value has ended (the previous iteration's with the delayed update),
//   and the next iteration's first use of a tensor copied back starts after that copy has ended.
// - Host bytes: one pinned buffer per tensor the Program copies; `pinned_host_bytes` must be their sum.
#include <cstdint>
#include <string>
#include <vector>

#include "program/program.h"
#include "program/trace.h"
#include "workloads/graph.h"

namespace dlsim {

struct SwapCheck {
  std::vector<std::string> problems;
  uint64_t host_bytes = 0;  // the pinned host bytes the Program needs
  bool ok() const { return problems.empty(); }
};

SwapCheck check_swapped_run(const Graph& g, const Program& p, const Trace& trace, uint64_t reported_pinned_bytes);

}  // namespace dlsim
