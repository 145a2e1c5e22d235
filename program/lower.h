#pragma once
// Lowering: a Graph, the concurrency policy's Schedule and the swap policy's SwapPlan -> a Program.
//
// Streams: compute streams 0 .. schedule.num_streams-1, then one communication stream per collective stream tag
// (program/comm_streams.h: each collective op moves there, whatever stream the schedule gave it; they count as
// compute streams below); with a non-empty swap plan on dedicated copy streams two more, a D2H copy stream
// (num_streams) and a H2D copy stream (num_streams + 1), num_streams counting the communication streams.
// setup: Alloc of every persistent tensor on stream 0 (weights, optimizer state, ...). The input batch is
//   not special: unless its builder made it persistent it is allocated before its first use in each
//   iteration and freed after its last, like an activation (the data loader's copy is not modelled).
// iteration, for each op in schedule order on its stream s:
//   WaitEvent for each cross-stream predecessor in Graph::dag() not already covered by an earlier wait on
//   the same stream pair, and for swapped-in tensors the op needs; Alloc (on s) of every non-persistent
//   tensor first used here; Alloc of the workspace; Launch; RecordEvent (multi-stream programs record after
//   every launch; records nobody waits for are dropped at the end); Free of the workspace; Free of every
//   non-persistent tensor last used here, on its allocation stream, after a RecordStream for each other stream
//   that used it (PyTorch's record_stream: the memory returns to the pool only once those streams are past
//   the free; the allocation stream does not wait, sim/executor.h). At the end of a multi-stream iteration
//   stream 0 joins every other stream and every stream waits for that join, so iterations do not overlap
//   on the device (the next iteration reads weights the optimizer writes).
// swaps (policies/swap/core/swap_policy.h), CopyStreams::Dedicated: after op `out_after`, the D2H stream waits for
//   the tensor's last writers and copies it out (nothing with copy_out = false: the host copy is current);
//   after op `free_after` (by default the next launch on the tensor's allocation stream, so that the copy
//   overlaps op out_after and that next op, as vDNN overlaps an offload with the layer's compute) the
//   allocation stream waits for that copy and the tensor is freed. After op `in_issue_after`: Alloc on the
//   stream of the op at `in_needed_by`, the H2D stream waits for that alloc point and for the host copy, then
//   copies in (copy-ins issued after the same op in the order they are needed); the op at `in_needed_by` waits
//   for the copy-in. An ExtraCopy moves data without freeing or allocating: to the host right after its op, to
//   the device right before it (the op waits for it).
//   CopyStreams::Compute: the same copies in line on the compute streams (the allocation stream for a
//   copy-out, the needing op's stream for a copy-in), ordered by the streams themselves; events only between
//   streams. host_waits_for_copy_out: after every copy to the host the host blocks on it (SyncEvent).
// recomputations: after the op a drop frees after, the tensor is freed on its allocation stream (with its
//   RecordStreams, as a last use frees it). Right before the op at `before` (after that op's waits), on its
//   stream, each replayed op: waits for what other streams did to the tensors it touches, Alloc of each output
//   not on the device, Alloc of its workspace, Launch, Free of the workspace, Free of each output allocated for
//   the replay alone after its last replayed reader. A dropped tensor made again is recorded as arrived, so
//   that other streams touching it wait for the replay. A plan with recomputations only adds no copy streams.
// host step (ZeRO-Offload, SwapPlan::host_step): one more stream, a CPU worker (Program::num_host_streams). Its ops
//   are not launched: HostCompute on the worker after a WaitEvent for the copy of each gradient it reads. A gradient
//   is copied out on the D2H stream right after its last device use and freed there with a RecordStream of the D2H
//   stream (its memory returns to the pool once the copy is done). Each tensor the step writes that the device uses
//   is copied in on the H2D stream after every device reader of it and the step's event; with delayed_update the
//   copy is issued before the step, so it waits for the previous iteration's step. Persistent tensors only host ops
//   use are neither allocated nor freed. The worker is left out of the end-of-iteration join.
// teardown: Free of every persistent tensor.
#include "policies/concurrency/concurrency_policy.h"
#include "policies/swap/core/swap_policy.h"
#include "program/program.h"
#include "workloads/graph.h"

namespace dlsim {

// Throws std::invalid_argument when the schedule or the plan does not fit the graph (an order that is not a
// permutation of the ops, a stream out of range, a swap action whose positions are out of order, whose tensor
// is used between copy-out and `in_needed_by` (read before it is back on the device), or that drops a tensor
// with no current host copy; an extra copy of a tensor that is not on the device; a recomputation that re-runs an
// op not yet run or an in-place op, drops a tensor used in its gap or never needed again, or re-runs an op whose
// input is not on the device), naming the tensor.
Program lower(const Graph& g, const Schedule& schedule, const SwapPlan& swaps);

}  // namespace dlsim
