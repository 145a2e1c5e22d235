#include "program/lower.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "policies/swap/core/host_step.h"
#include "policies/swap/core/program_load.h"
#include "program/comm_streams.h"
#include "program/internal/lowerer.h"

namespace dlsim {

namespace program_internal {

void Lowerer::emit(CmdKind k, int stream, OpId op, TensorId t, int32_t ev) {
  Command c;
  c.kind = k;
  c.stream = static_cast<int16_t>(stream);
  c.op = op;
  c.tensor = t;
  c.event = ev;
  out_->push_back(c);
}

void Lowerer::check_schedule() {
  const size_t n = g_.ops().size();
  if (s_.num_streams < 1 || s_.num_streams > kMaxLoweredStreams)
    fail("schedule has num_streams " + std::to_string(s_.num_streams) + " (must be 1 to " +
         std::to_string(kMaxLoweredStreams) + ": the lowering keeps sets of streams in 64 bits, beside two copy streams)");
  if (s_.order.size() != n)
    fail("schedule order has " + std::to_string(s_.order.size()) + " ops, the graph " + std::to_string(n));
  if (s_.stream_of.size() != n)
    fail("schedule stream_of has " + std::to_string(s_.stream_of.size()) + " entries, the graph " +
         std::to_string(n) + " ops");
  pos_of_.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const OpId o = s_.order[i];
    if (o < 0 || static_cast<size_t>(o) >= n) fail("schedule order[" + std::to_string(i) + "] = " + std::to_string(o) + " is not an op");
    if (pos_of_[static_cast<size_t>(o)] >= 0) fail("schedule order lists op '" + g_.op(o).name + "' twice");
    pos_of_[static_cast<size_t>(o)] = static_cast<int>(i);
    const int st = s_.stream_of[static_cast<size_t>(o)];
    if (st < 0 || st >= s_.num_streams)
      fail("op '" + g_.op(o).name + "' is on stream " + std::to_string(st) + ", outside 0.." + std::to_string(s_.num_streams - 1));
  }
}

// A kernel variant other than 0 brings its own workspace size: the op's workspace tensor takes it.
void Lowerer::apply_variants() {
  if (s_.variant_of.empty()) return;
  const size_t n = g_.ops().size();
  if (s_.variant_of.size() != n || s_.variant_workspace_bytes.size() != n)
    fail("schedule variant_of / variant_workspace_bytes have " + std::to_string(s_.variant_of.size()) + " / " +
         std::to_string(s_.variant_workspace_bytes.size()) + " entries, the graph " + std::to_string(n) + " ops");
  p_.kernel_variant = s_.variant_of;
  bool changed = false;
  std::vector<uint64_t> bytes;
  bytes.reserve(g_.tensors().size());
  for (const Tensor& t : g_.tensors()) bytes.push_back(t.bytes);
  for (size_t i = 0; i < n; ++i) {
    const Op& op = g_.ops()[i];
    if (s_.variant_of[i] == 0 || op.workspace == kNoTensor) continue;
    bytes[static_cast<size_t>(op.workspace)] = s_.variant_workspace_bytes[i];
    changed = true;
  }
  if (changed) p_.tensor_bytes = std::move(bytes);
}

// A replay's inputs stay allocated until it runs (replay_reads), as a use there.
void Lowerer::hold_replay_inputs() {
  for (const auto& [t, before] : replay_reads(g_, plan_)) {
    const auto ti = static_cast<size_t>(t);
    if (first_[ti] < 0 || first_[ti] >= before || last_[ti] >= before) continue;
    last_[ti] = before;
    held_to_.push_back(t);
  }
}

void Lowerer::compute_lifetimes() {
  const size_t nt = g_.tensors().size();
  first_.assign(nt, -1);
  last_.assign(nt, -1);
  for (int i = 0; i < n_; ++i) {
    const Op& op = g_.op(s_.order[static_cast<size_t>(i)]);
    if (!hs_.host_op.empty() && hs_.host_op[static_cast<size_t>(op.id)]) continue;  // host memory, not the device's
    auto touch = [&](TensorId t) {
      if (t < 0 || static_cast<size_t>(t) >= nt) fail("op '" + op.name + "' names tensor " + std::to_string(t) + ", not in the graph");
      if (first_[static_cast<size_t>(t)] < 0) first_[static_cast<size_t>(t)] = i;
      last_[static_cast<size_t>(t)] = i;
    };
    for (TensorId t : op.inputs) touch(t);
    for (TensorId t : op.outputs) touch(t);
    if (op.workspace != kNoTensor && (op.workspace < 0 || static_cast<size_t>(op.workspace) >= nt))
      fail("op '" + op.name + "' names workspace tensor " + std::to_string(op.workspace) + ", not in the graph");
  }
}

// Makes `stream` wait for the op at `pos` (through its event), unless FIFO order or an earlier wait of this
// stream for a later op of the same stream already covers it.
void Lowerer::wait_for_op(int stream, int pos) {
  const int other = stream_at(pos);
  if (other == stream) return;
  int& seen = waited_[static_cast<size_t>(stream)][static_cast<size_t>(other)];
  if (seen >= pos) return;
  seen = pos;
  emit(CmdKind::WaitEvent, stream, -1, kNoTensor, pos);
}

void Lowerer::note_use(std::vector<Use>& uses, int stream, int pos) {
  for (Use& u : uses)
    if (u.stream == stream) {
      u.pos = pos;
      return;
    }
  uses.push_back({stream, pos});
}

// Names every other stream that used `t` since its allocation (PyTorch's record_stream), in stream order: the
// Free then holds the memory until those streams are past it, instead of making the allocation stream wait.
void Lowerer::record_other_users(TensorId t, int stream) {
  std::vector<Use> uses = users_[static_cast<size_t>(t)];
  std::sort(uses.begin(), uses.end(), [](const Use& a, const Use& b) { return a.stream < b.stream; });
  for (const Use& u : uses)
    if (u.stream != stream) emit(CmdKind::RecordStream, u.stream, -1, t);
}

void Lowerer::alloc(TensorId t, int stream) {
  const auto i = static_cast<size_t>(t);
  alloc_stream_[i] = stream;
  resident_[i] = 1;
  users_[i].clear();
  writers_[i].clear();
  arrival_event_[i] = -1;
  arrival_waited_[i] = 0;
  emit(CmdKind::Alloc, stream, -1, t);
  alloc_event_[i] = -1;
  if (copied_to_host_[i] && multi_ && !inline_copies_) {  // unused records are pruned at the end
    alloc_event_[i] = next_event_++;
    emit(CmdKind::RecordEvent, stream, -1, kNoTensor, alloc_event_[i]);
  }
}

void Lowerer::free_tensor(TensorId t) {
  const int a = alloc_stream_[static_cast<size_t>(t)];
  if (multi_) record_other_users(t, a);
  if (int32_t& ev = pending_extra_out_[static_cast<size_t>(t)]; ev >= 0) {
    emit(CmdKind::WaitEvent, a, -1, kNoTensor, ev);
    ev = -1;
  }
  emit(CmdKind::Free, a, -1, t);
  resident_[static_cast<size_t>(t)] = 0;
}

void Lowerer::lower_op(int pos) {
  const OpId id = s_.order[static_cast<size_t>(pos)];
  const Op& op = g_.op(id);
  const int s = stream_at(pos);
  if (pos == 0) fetch_parameters_after(-1);
  if (host_ >= 0 && hs_.host_op[static_cast<size_t>(id)]) {
    lower_host_op(pos);
    fetch_parameters_after(pos);
    return;
  }

  if (multi_) {  // cross-stream dependences, latest first so that it covers earlier ones on the same stream
    std::vector<int> preds;
    const Graph::Dag& dag = *dag_;
    for (auto [e, end] = boost::in_edges(static_cast<Graph::Dag::vertex_descriptor>(id), dag); e != end; ++e)
      preds.push_back(pos_of_[boost::source(*e, dag)]);
    std::sort(preds.rbegin(), preds.rend());
    for (int p : preds) {
      if (p >= pos) fail("schedule order is not topological: op '" + op.name + "' comes before its predecessor '" +
                         g_.op(s_.order[static_cast<size_t>(p)]).name + "'");
      wait_for_op(s, p);
    }
  }
  if (!inline_copies_)
    for (size_t a : needs_at_[static_cast<size_t>(pos)]) {
      emit(CmdKind::WaitEvent, s, -1, kNoTensor, in_done_[a]);
      arrival_waited_[static_cast<size_t>(plan_.actions[a].tensor)] |= uint64_t{1} << s;
    }
  for (size_t r : replays_at_[static_cast<size_t>(pos)]) replay(r, pos);

  std::vector<TensorId> touched;  // inputs then outputs, each once
  for (TensorId t : op.inputs)
    if (std::find(touched.begin(), touched.end(), t) == touched.end()) touched.push_back(t);
  for (TensorId t : op.outputs)
    if (std::find(touched.begin(), touched.end(), t) == touched.end()) touched.push_back(t);
  for (TensorId t : touched) {  // data a copy brought back, read or overwritten on another stream
    const auto ti = static_cast<size_t>(t);
    if (arrival_event_[ti] < 0 || (arrival_waited_[ti] >> s & 1)) continue;
    emit(CmdKind::WaitEvent, s, -1, kNoTensor, arrival_event_[ti]);
    arrival_waited_[ti] |= uint64_t{1} << s;
  }
  for (TensorId t : touched)
    if (!g_.tensor(t).persistent && first_[static_cast<size_t>(t)] == pos && !resident_[static_cast<size_t>(t)])
      alloc(t, s);  // unless a replay before the op made it (an FSDP unit's regathered parameters)
  // A workspace of 0 bytes (a calibrated algorithm that needs none) is no allocation at all.
  const bool ws = op.workspace != kNoTensor && alloc_bytes(p_, g_, op.workspace) > 0;
  if (ws) emit(CmdKind::Alloc, s, -1, op.workspace);
  for (size_t i : extra_before_[static_cast<size_t>(pos)]) extra_copy(plan_.copies[i], pos);
  emit(CmdKind::Launch, s, id);
  if (multi_) emit(CmdKind::RecordEvent, s, -1, kNoTensor, pos);
  for (TensorId t : touched) note_use(users_[static_cast<size_t>(t)], s, pos);
  for (TensorId t : op.outputs) note_use(writers_[static_cast<size_t>(t)], s, pos);
  for (size_t i : extra_after_[static_cast<size_t>(pos)]) extra_copy(plan_.copies[i], pos);
  if (ws) emit(CmdKind::Free, s, -1, op.workspace);
  for (TensorId t : touched)  // host step: a gradient leaves for the host after its last use here
    if (host_ >= 0 && hs_.to_host_after[static_cast<size_t>(t)] == pos) {
      copy_to_host(d2h_, t, next_event_++);
      note_use(users_[static_cast<size_t>(t)], d2h_, pos);  // its free below holds the memory until the copy is done
    }
  for (TensorId t : touched)
    if (!g_.tensor(t).persistent && last_[static_cast<size_t>(t)] == pos) free_tensor(t);
  if (!fetch_frees_at_.empty())
    for (TensorId t : fetch_frees_at_[static_cast<size_t>(pos)]) free_tensor(t);  // a parameter back on the host only
  for (TensorId t : held_to_)  // held for a replay here, not touched by the op itself
    if (last_[static_cast<size_t>(t)] == pos && resident_[static_cast<size_t>(t)] &&
        std::find(touched.begin(), touched.end(), t) == touched.end())
      free_tensor(t);

  for (size_t a : outs_at_[static_cast<size_t>(pos)]) copy_out(a);
  for (size_t a : frees_at_[static_cast<size_t>(pos)]) {  // the copy is done before the memory is reused
    const SwapAction& x = plan_.actions[a];
    if (x.copy_out && !inline_copies_)
      emit(CmdKind::WaitEvent, alloc_stream_[static_cast<size_t>(x.tensor)], -1, kNoTensor, out_done_[a]);
    free_tensor(x.tensor);
  }
  for (const auto& [r, d] : drops_at_[static_cast<size_t>(pos)]) drop(r, d, pos);
  for (size_t a : ins_at_[static_cast<size_t>(pos)]) copy_in(a);
  fetch_parameters_after(pos);
}

// Stream 0 waits for every other stream, then every stream waits for stream 0: the next iteration starts
// on the device only after this one is complete everywhere.
void Lowerer::join_streams() {
  const int all = p_.num_streams - p_.num_host_streams;  // a CPU worker's delayed step runs on into the next iteration
  for (int t = 1; t < all; ++t) {
    const int32_t ev = next_event_++;
    emit(CmdKind::RecordEvent, t, -1, kNoTensor, ev);
    emit(CmdKind::WaitEvent, 0, -1, kNoTensor, ev);
  }
  const int32_t joined = next_event_++;
  emit(CmdKind::RecordEvent, 0, -1, kNoTensor, joined);
  for (int t = 1; t < all; ++t) emit(CmdKind::WaitEvent, t, -1, kNoTensor, joined);
}

// Drops records nobody waits for and numbers the remaining events densely, in their old order.
void Lowerer::prune_events() {
  std::vector<int32_t> remap(static_cast<size_t>(next_event_), -1);
  for (const auto* sec : {&p_.setup, &p_.iteration, &p_.teardown})
    for (const Command& c : *sec)
      if (c.kind == CmdKind::WaitEvent || c.kind == CmdKind::SyncEvent) remap[static_cast<size_t>(c.event)] = 0;
  int32_t next = 0;
  for (int32_t& r : remap)
    if (r == 0) r = next++;
  for (auto* sec : {&p_.setup, &p_.iteration, &p_.teardown}) {
    std::vector<Command> kept;
    kept.reserve(sec->size());
    for (Command c : *sec) {
      if (c.event >= 0) {
        if (remap[static_cast<size_t>(c.event)] < 0) continue;  // an unused record
        c.event = remap[static_cast<size_t>(c.event)];
      }
      kept.push_back(c);
    }
    *sec = std::move(kept);
  }
  p_.num_events = next;
}

Program Lowerer::run() {
  n_ = static_cast<int>(g_.ops().size());
  check_schedule();
  if (!plan_.host_step.empty()) {
    if (plan_.streams == CopyStreams::Compute) fail("a host step needs dedicated copy streams");
    if (plan_.host_step.fetch_parameters && plan_.host_step.delayed_update)
      fail("a host step that fetches the parameters has no delayed update");
    if (plan_.host_step.fetch_parameters && !plan_.actions.empty())
      fail("a host step that fetches the parameters cannot be combined with swap actions");
    hs_ = host_step_tensors(g_, s_.order, plan_.host_step);
    fetches_ = parameter_fetches(g_, s_.order, plan_, hs_);
    if (!fetches_.empty()) {
      fetch_frees_at_.assign(static_cast<size_t>(n_), {});
      for (const ParameterFetch& f : fetches_) fetch_frees_at_[static_cast<size_t>(f.last)].push_back(f.tensor);
    }
  }
  compute_lifetimes();
  hold_replay_inputs();
  apply_variants();
  check_swaps();
  inline_copies_ = plan_.streams == CopyStreams::Compute;
  const bool swaps = plan_.copies_data() && !inline_copies_;  // a recomputation needs no copy stream
  p_.num_compute_streams = s_.num_streams;
  p_.num_streams = s_.num_streams + (swaps ? 2 : 0);
  if (swaps) {
    d2h_ = s_.num_streams;
    h2d_ = s_.num_streams + 1;
  }
  if (!plan_.host_step.empty()) {
    host_ = p_.num_streams++;
    p_.num_host_streams = 1;
    p_.delayed_host_update = plan_.host_step.delayed_update;
    p_.host_rate_scale = plan_.host_step.cpu_rate_scale;
  }
  multi_ = p_.num_streams > 1;
  next_event_ = n_;
  for (size_t a = 0; a < plan_.actions.size(); ++a) {
    out_done_.push_back(next_event_++);
    in_done_.push_back(next_event_++);
  }
  const size_t nt = g_.tensors().size();
  alloc_stream_.assign(nt, 0);
  users_.assign(nt, {});
  writers_.assign(nt, {});
  host_copy_event_.assign(nt, -1);
  pending_extra_out_.assign(nt, -1);
  alloc_event_.assign(nt, -1);
  arrival_event_.assign(nt, -1);
  arrival_waited_.assign(nt, 0);
  copied_to_host_.assign(nt, false);
  resident_.assign(nt, 0);
  for (const SwapAction& x : plan_.actions)
    if (x.copy_out) copied_to_host_[static_cast<size_t>(x.tensor)] = true;
  for (const ExtraCopy& c : plan_.copies)
    if (c.to_host) copied_to_host_[static_cast<size_t>(c.tensor)] = true;
  for (TensorId t : hs_.to_host) copied_to_host_[static_cast<size_t>(t)] = true;
  for (OpId o : plan_.host_step.ops) step_done_[o] = next_event_++;
  waited_.assign(static_cast<size_t>(p_.num_streams), std::vector<int>(static_cast<size_t>(p_.num_streams), -1));
  Graph::Dag dag;
  if (multi_) {
    dag = g_.dag();
    dag_ = &dag;
  }

  // A persistent tensor lives on its home stream from the setup on: where its last round trip of an iteration
  // leaves it, so that each iteration starts as the previous one ended.
  const std::vector<int> home = persistent_home_streams(g_, s_.order, s_.stream_of, plan_);
  out_ = &p_.setup;
  auto on_device = [&](const Tensor& t) {
    if (!t.persistent || host_ < 0) return t.persistent;
    const auto ti = static_cast<size_t>(t.id);
    return !hs_.host_only[ti] && !(plan_.host_step.fetch_parameters && hs_.from_host[ti]);
  };
  for (const Tensor& t : g_.tensors())
    if (on_device(t)) {
      alloc_stream_[static_cast<size_t>(t.id)] = home[static_cast<size_t>(t.id)];
      resident_[static_cast<size_t>(t.id)] = 1;
      emit(CmdKind::Alloc, home[static_cast<size_t>(t.id)], -1, t.id);
    }
  out_ = &p_.iteration;
  for (int i = 0; i < n_; ++i) lower_op(i);
  if (multi_) join_streams();
  out_ = &p_.teardown;
  for (const Tensor& t : g_.tensors())
    if (on_device(t)) emit(CmdKind::Free, alloc_stream_[static_cast<size_t>(t.id)], -1, t.id);
  prune_events();
  return std::move(p_);
}

}  // namespace program_internal

Program lower(const Graph& g, const Schedule& schedule, const SwapPlan& swaps) {
  if (!has_collectives(g)) return program_internal::Lowerer(g, schedule, swaps).run();
  const Schedule placed = with_comm_streams(g, schedule);  // collectives on their communication streams
  return program_internal::Lowerer(g, placed, swaps).run();
}

}  // namespace dlsim
