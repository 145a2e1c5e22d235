#pragma once
// An independent check of memory safety across streams: it reads only the Program and the trace of what ran
// (not the pool, the lowering or the executor's own bookkeeping) and reports every place where device work
// touched memory that an earlier tensor of the same iteration still had work on.
// In the trace's last iteration, each allocation's lifetime (Alloc to Free in the Program) collects the device
// work that touches the tensor meanwhile: kernels that read or write it (and its workspace) and copies of it.
// Two lifetimes whose address ranges overlap must not overlap on the device: the earlier one's last work ends
// no later than the later one's first work starts. One stream orders this by itself; several streams need the
// events that the lowering (RecordStream) and the executor (holding frees, ordering reuse) put in.
#include <string>
#include <vector>

#include "program/program.h"
#include "program/trace.h"
#include "workloads/graph.h"

namespace dlsim {

// Problems found (empty: none); nothing is checked for a trace that ran out of memory or has no iteration.
std::vector<std::string> check_memory_reuse(const Graph& g, const Program& p, const Trace& trace);

}  // namespace dlsim
