// The swap plan's commands: copies out and in, extra copies, recomputation replays and drops, parameter fetches
// and the host step's CPU ops with their copies back.
#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "policies/swap/core/host_step.h"
#include "policies/swap/core/program_load.h"
#include "program/internal/lowerer.h"

namespace dlsim::program_internal {

// Frees a dropped tensor after the op at `pos`, as its last use there would.
void Lowerer::drop(size_t r, size_t d, int pos) {
  const TensorId t = plan_.recomputations[r].drops[d].tensor;
  if (!resident_[static_cast<size_t>(t)])
    fail("recomputation " + std::to_string(r) + " (tensor '" + g_.tensor(t).name + "'): the tensor is not on the device after position " +
         std::to_string(pos) + " to be dropped");
  free_tensor(t);
}

// Re-runs the recomputation's ops right before the op at `pos`, on its stream. Uses are noted at `pos`: the op's
// event, recorded after its launch, also covers the replay before it in stream order.
void Lowerer::replay(size_t r, int pos) {
  const Recomputation& rc = plan_.recomputations[r];
  const int s = stream_at(pos);
  const std::string who = "recomputation " + std::to_string(r) + " (before position " + std::to_string(pos) + ")";
  auto kept = [&](TensorId t) {
    return std::any_of(rc.drops.begin(), rc.drops.end(), [&](const Recomputation::Drop& d) { return d.tensor == t; });
  };
  std::map<TensorId, size_t> last_reader;  // within the replay
  for (size_t j = 0; j < rc.ops.size(); ++j)
    for (TensorId t : g_.replay_inputs(g_.op(rc.ops[j]))) last_reader[t] = j;
  std::vector<std::pair<TensorId, size_t>> transient;  // allocated for the replay only: freed after this index
  // Selective checkpointing's cache: a held tensor that only the replay still needs (nothing at or after `pos`
  // uses it) goes once the replay has popped it and its last replayed reader has run (held_release).
  std::vector<std::pair<TensorId, int>> cache_only;
  {
    const Op& at = g_.op(s_.order[static_cast<size_t>(pos)]);
    const std::vector<int> release = held_release(g_, s_.order, rc);
    for (size_t h = 0; h < rc.held.size(); ++h) {
      const TensorId t = rc.held[h];
      const auto ti = static_cast<size_t>(t);
      if (last_[ti] == pos && std::count(held_to_.begin(), held_to_.end(), t) && !std::count(at.inputs.begin(), at.inputs.end(), t) &&
          !std::count(at.outputs.begin(), at.outputs.end(), t))
        cache_only.push_back({t, release[h]});
    }
  }
  auto release_cache = [&](int j) {
    for (const auto& [t, after] : cache_only)
      if (after == j && resident_[static_cast<size_t>(t)]) free_tensor(t);
  };
  release_cache(-1);
  for (size_t j = 0; j < rc.ops.size(); ++j) {
    const Op& op = g_.op(rc.ops[j]);
    const std::vector<TensorId> inputs = g_.replay_inputs(op);  // FSDP: the unit's regathered parameters
    for (TensorId t : inputs) {  // a tensor whose lifetime starts at the op the replay stands before: made now
      const auto ti = static_cast<size_t>(t);
      if (!resident_[ti] && !g_.tensor(t).persistent && first_[ti] == pos) alloc(t, s);
    }
    for (TensorId t : inputs)
      if (!resident_[static_cast<size_t>(t)])
        fail(who + ": op '" + op.name + "' reads tensor '" + g_.tensor(t).name + "', which is not on the device then" +
             (first_[static_cast<size_t>(t)] > pos ? " (its lifetime starts at position " +
                                                         std::to_string(first_[static_cast<size_t>(t)]) + ", after the replay)"
                                                   : ""));
    std::vector<TensorId> touched;
    for (const auto* v : {&inputs, &op.outputs})
      for (TensorId t : *v)
        if (std::find(touched.begin(), touched.end(), t) == touched.end()) touched.push_back(t);
    for (TensorId t : touched) {
      const auto ti = static_cast<size_t>(t);
      if (!resident_[ti]) continue;
      if (multi_)  // what other streams wrote (or, for an output written again, read) since its allocation
        for (const Use& u : users_[ti]) wait_for_op(s, u.pos);
      if (arrival_event_[ti] < 0 || (arrival_waited_[ti] >> s & 1)) continue;
      emit(CmdKind::WaitEvent, s, -1, kNoTensor, arrival_event_[ti]);
      arrival_waited_[ti] |= uint64_t{1} << s;
    }
    for (TensorId t : op.outputs)
      if (!resident_[static_cast<size_t>(t)]) {
        alloc(t, s);
        if (!kept(t)) {
          auto it = last_reader.find(t);
          transient.push_back({t, it != last_reader.end() && it->second > j ? it->second : j});
        }
      }
    const bool ws = op.workspace != kNoTensor && alloc_bytes(p_, g_, op.workspace) > 0;
    if (ws) emit(CmdKind::Alloc, s, -1, op.workspace);
    emit(CmdKind::Launch, s, op.id);
    out_->back().replay = true;
    for (TensorId t : touched) note_use(users_[static_cast<size_t>(t)], s, pos);
    for (TensorId t : op.outputs) note_use(writers_[static_cast<size_t>(t)], s, pos);
    if (ws) emit(CmdKind::Free, s, -1, op.workspace);
    for (const auto& [t, last] : transient)
      if (last == j) free_tensor(t);
    release_cache(static_cast<int>(j));
  }
  for (const Recomputation::Drop& d : rc.drops)
    if (!resident_[static_cast<size_t>(d.tensor)])
      fail(who + ": tensor '" + g_.tensor(d.tensor).name + "' is not made again by the ops it re-runs");
  // Other streams that touch what the replay wrote (made again, or written again while still on the device) wait
  // for the replay, not only for the tensor's first writer.
  std::vector<TensorId> written;
  for (OpId o : rc.ops)
    for (TensorId t : g_.op(o).outputs)
      if (resident_[static_cast<size_t>(t)] && !g_.tensor(t).persistent &&
          std::find(written.begin(), written.end(), t) == written.end())
        written.push_back(t);
  for (TensorId t : written) arrived(t, s);
}

// fetch_parameters: each parameter whose fetch is issued after `pos` gets fresh memory on the stream of its first use
// and is copied in on the H2D stream from the host copy the latest step left (the previous iteration's: the step's
// event is recorded later in the program); the ops that use it wait for the copy.
void Lowerer::fetch_parameters_after(int pos) {
  for (; next_fetch_ < fetches_.size() && fetches_[next_fetch_].issue_after == pos; ++next_fetch_) {
    const ParameterFetch& f = fetches_[next_fetch_];
    const int c = stream_at(f.first);
    alloc(f.tensor, c);
    const int32_t alloc_point = next_event_++;
    emit(CmdKind::RecordEvent, c, -1, kNoTensor, alloc_point);
    emit(CmdKind::WaitEvent, h2d_, -1, kNoTensor, alloc_point);
    for (OpId o : plan_.host_step.ops)
      if (std::count(g_.op(o).outputs.begin(), g_.op(o).outputs.end(), f.tensor))
        emit(CmdKind::WaitEvent, h2d_, -1, kNoTensor, step_done_.at(o));
    emit(CmdKind::CopyIn, h2d_, -1, f.tensor);
    const int32_t done = next_event_++;
    emit(CmdKind::RecordEvent, h2d_, -1, kNoTensor, done);
    arrival_event_[static_cast<size_t>(f.tensor)] = done;  // every op touching it waits (lower_op)
    arrival_waited_[static_cast<size_t>(f.tensor)] = 0;
  }
}

// A copy to the host reads the tensor after its last writes and its copy-in. A tensor that nothing wrote since
// its allocation in this iteration (a graph input such as the labels) still got memory handed over in stream order
// on its allocation stream, perhaps just freed by an op there that is still running: the copy stream waits for the
// event recorded right after that allocation (simulation fuzzer, seed 4755014: the labels' copy-out read memory
// the input's last reader was still using).
void Lowerer::wait_before_copy_out(int st, TensorId t) {
  const auto ti = static_cast<size_t>(t);
  for (const Use& w : writers_[ti]) wait_for_op(st, w.pos);
  if (!inline_copies_ && arrival_event_[ti] >= 0) emit(CmdKind::WaitEvent, st, -1, kNoTensor, arrival_event_[ti]);
  if (writers_[ti].empty() && arrival_event_[ti] < 0 && alloc_event_[ti] >= 0)
    emit(CmdKind::WaitEvent, st, -1, kNoTensor, alloc_event_[ti]);
}

// Copy-out after the tensor's last writes: on the D2H stream, or in line on its allocation stream.
void Lowerer::copy_out(size_t a) {
  const SwapAction& x = plan_.actions[a];
  if (!x.copy_out) return;  // the host copy made earlier is current: nothing to move
  const TensorId t = x.tensor;
  const auto ti = static_cast<size_t>(t);
  copy_to_host(inline_copies_ ? alloc_stream_[ti] : d2h_, t, inline_copies_ ? next_event_++ : out_done_[a]);
}

// On stream `st`, after the tensor's last writes: the copy to the host, then event `done` marking its host copy
// current (the host blocks on it where the plan says so).
void Lowerer::copy_to_host(int st, TensorId t, int32_t done) {
  wait_before_copy_out(st, t);
  emit(CmdKind::CopyOut, st, -1, t);
  emit(CmdKind::RecordEvent, st, -1, kNoTensor, done);
  host_copy_event_[static_cast<size_t>(t)] = done;
  if (plan_.host_waits_for_copy_out) emit(CmdKind::SyncEvent, st, -1, kNoTensor, done);
}

// Fresh memory on the stream of the op that needs the tensor, then the copy-in behind the host copy.
void Lowerer::copy_in(size_t a) {
  const SwapAction& x = plan_.actions[a];
  const auto ti = static_cast<size_t>(x.tensor);
  const int c = stream_at(x.in_needed_by);
  alloc(x.tensor, c);
  const int32_t host_copy = host_copy_event_[ti];
  if (inline_copies_) {  // in stream order behind the alloc; only another stream's copy-out needs an event
    if (multi_ && host_copy >= 0) emit(CmdKind::WaitEvent, c, -1, kNoTensor, host_copy);
    emit(CmdKind::CopyIn, c, -1, x.tensor);
    arrived(x.tensor, c);
    return;
  }
  const int32_t alloc_point = next_event_++;  // the memory may be reused from work queued on c before this
  emit(CmdKind::RecordEvent, c, -1, kNoTensor, alloc_point);
  emit(CmdKind::WaitEvent, h2d_, -1, kNoTensor, alloc_point);
  if (host_copy >= 0) emit(CmdKind::WaitEvent, h2d_, -1, kNoTensor, host_copy);
  emit(CmdKind::CopyIn, h2d_, -1, x.tensor);
  emit(CmdKind::RecordEvent, h2d_, -1, kNoTensor, in_done_[a]);
  arrival_event_[ti] = in_done_[a];  // the op it is for waits at its launch (needs_at_)
  arrival_waited_[ti] = 0;
}

// The data of `t` just arrived in stream order on `stream`: other streams that touch it later wait for this point.
void Lowerer::arrived(TensorId t, int stream) {
  if (!multi_) return;
  const auto ti = static_cast<size_t>(t);
  arrival_event_[ti] = next_event_++;
  emit(CmdKind::RecordEvent, stream, -1, kNoTensor, arrival_event_[ti]);
  arrival_waited_[ti] = uint64_t{1} << stream;
}

// A copy that changes no residency: to the host right after the op at `pos`, to the device right before it.
void Lowerer::extra_copy(const ExtraCopy& c, int pos) {
  const auto ti = static_cast<size_t>(c.tensor);
  const int s = stream_at(pos);
  if (c.to_host) {
    const int32_t done = next_event_++;
    if (!inline_copies_) pending_extra_out_[ti] = done;
    copy_to_host(inline_copies_ ? s : d2h_, c.tensor, done);
    return;
  }
  const int st = inline_copies_ ? s : h2d_;
  if (multi_)
    for (const Use& w : writers_[ti]) wait_for_op(st, w.pos);
  if (host_copy_event_[ti] >= 0 && (multi_ || !inline_copies_)) emit(CmdKind::WaitEvent, st, -1, kNoTensor, host_copy_event_[ti]);
  emit(CmdKind::CopyIn, st, -1, c.tensor);
  if (!inline_copies_) {
    const int32_t done = next_event_++;
    emit(CmdKind::RecordEvent, st, -1, kNoTensor, done);
    emit(CmdKind::WaitEvent, s, -1, kNoTensor, done);
    arrival_event_[ti] = done;
    arrival_waited_[ti] = uint64_t{1} << s;
  } else {
    arrived(c.tensor, s);
  }
}

// The host step's op at `pos` on the CPU worker, after the copies of what it reads; the tensors it writes that the
// device uses are copied back after it, or (delayed update) the previous step's before it.
void Lowerer::lower_host_op(int pos) {
  const OpId id = s_.order[static_cast<size_t>(pos)];
  const Op& op = g_.op(id);
  const int32_t done = step_done_.at(id);
  const bool copy_back = !plan_.host_step.fetch_parameters;  // fetched parameters are copied in before each use
  if (copy_back && plan_.host_step.delayed_update) copy_back_from_host(op, done);
  std::vector<int32_t> waited;
  for (TensorId t : op.inputs) {
    const int32_t ev = host_copy_event_[static_cast<size_t>(t)];
    if (hs_.to_host_after[static_cast<size_t>(t)] < 0 || ev < 0 || std::count(waited.begin(), waited.end(), ev)) continue;
    waited.push_back(ev);
    emit(CmdKind::WaitEvent, host_, -1, kNoTensor, ev);
  }
  emit(CmdKind::HostCompute, host_, id);
  emit(CmdKind::RecordEvent, host_, -1, kNoTensor, done);
  if (copy_back && !plan_.host_step.delayed_update) copy_back_from_host(op, done);
}

// The H2D stream copies each tensor `op` writes back into device memory once every device reader of the old value
// is done and the step is (the event `step_done`: the latest step, or with delayed update the previous one).
void Lowerer::copy_back_from_host(const Op& op, int32_t step_done) {
  for (TensorId t : op.outputs) {
    const auto ti = static_cast<size_t>(t);
    if (!hs_.from_host[ti]) continue;
    for (const Use& u : users_[ti]) wait_for_op(h2d_, u.pos);
    emit(CmdKind::WaitEvent, h2d_, -1, kNoTensor, step_done);
    emit(CmdKind::CopyIn, h2d_, -1, t);
    arrived(t, h2d_);
  }
}

}  // namespace dlsim::program_internal
