#pragma once
// Which trace record is which copy command. A Program may copy one tensor several times in an iteration (a swap
// round trip, save-on-cpu's copy-in per backward use) and, with several streams, two copies of it may run at
// once, so records cannot be matched to commands by start time alone. One stream runs its commands in order:
// per (tensor, direction, stream), the k-th command issued is the k-th record by start. A record without a
// stream (a trace written before records had one) is matched on (tensor, direction) alone.
#include <vector>

#include "program/program.h"
#include "program/trace.h"

namespace dlsim {

// Per command of `cmds` (an iteration of a Program): the record of its copy in `iteration` of the trace, or null
// (not a copy, or the trace has no such record).
std::vector<const CopyRecord*> match_copies(const std::vector<Command>& cmds, const Trace& tr, int iteration);

}  // namespace dlsim
