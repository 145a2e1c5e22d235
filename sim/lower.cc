#include "sim/lower.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "policies/swap/host_step.h"
#include "policies/swap/program_load.h"

namespace dlsim {

namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("lower: " + what); }

constexpr int kMaxLoweredStreams = 62;  // compute streams; the hardware has 32 queues (kMaxHardwareStreams)

// Each op's position-numbered event (event id = position) is recorded right after its launch; swap and join
// events are numbered after them. Records that no wait refers to are dropped at the end.
class Lowerer {
 public:
  Lowerer(const Graph& g, const Schedule& s, const SwapPlan& plan) : g_(g), s_(s), plan_(plan) {}
  Program run();

 private:
  struct Use {
    int stream;
    int pos;
  };
  void check_schedule();
  void compute_lifetimes();
  void hold_replay_inputs();
  void apply_variants();
  void check_swaps();
  void emit(CmdKind k, int stream, OpId op = -1, TensorId t = kNoTensor, int32_t ev = -1);
  void wait_for_op(int stream, int pos);
  void note_use(std::vector<Use>& uses, int stream, int pos);
  void record_other_users(TensorId t, int stream);
  void alloc(TensorId t, int stream);
  void free_tensor(TensorId t);
  void lower_op(int pos);
  void copy_out(size_t a);
  void wait_before_copy_out(int st, TensorId t);
  void copy_to_host(int st, TensorId t, int32_t done);
  void arrived(TensorId t, int stream);
  void copy_in(size_t a);
  void extra_copy(const ExtraCopy& c, int pos);
  void check_copy_out(size_t a, const std::vector<size_t>& earlier);
  void check_extra_copies();
  void check_recomputations();
  void replay(size_t r, int pos);
  void lower_host_op(int pos);
  void copy_back_from_host(const Op& op, int32_t step_done);
  void drop(size_t r, size_t d, int pos);
  void join_streams();
  void prune_events();
  int stream_at(int pos) const { return s_.stream_of[static_cast<size_t>(s_.order[static_cast<size_t>(pos)])]; }

  const Graph& g_;
  const Schedule& s_;
  const SwapPlan& plan_;
  Program p_;
  std::vector<Command>* out_ = nullptr;
  int n_ = 0;           // ops
  int d2h_ = -1, h2d_ = -1;
  bool multi_ = false;  // more than one stream: events are needed
  const Graph::Dag* dag_ = nullptr;  // the op DAG, built only when there are several streams
  int32_t next_event_ = 0;
  std::vector<int> pos_of_;            // OpId -> position
  std::vector<int> first_, last_;      // TensorId -> first/last position using it (workspace excluded)
  std::vector<int> alloc_stream_;      // TensorId -> stream it is allocated on, while allocated
  std::vector<std::vector<Use>> users_, writers_;  // TensorId -> last use/write per stream since its alloc
  std::vector<int32_t> host_copy_event_;  // TensorId -> event after its latest copy to the host, -1 none
  // TensorId -> a to-host extra copy on the D2H stream that may still read its memory, -1 none: the free waits.
  std::vector<int32_t> pending_extra_out_;
  std::vector<int32_t> alloc_event_;      // TensorId -> event right after its allocation, -1 none
  // TensorId -> event after the latest copy of its data onto the device (swap copy-in or extra copy-in), -1 none,
  // and the streams already ordered after it (bit per stream): every op that touches the tensor on another
  // stream waits for it too, not only the op the copy was for.
  std::vector<int32_t> arrival_event_;
  std::vector<uint64_t> arrival_waited_;
  std::vector<bool> copied_to_host_;      // TensorId -> the plan copies it to the host somewhere
  std::vector<std::vector<int>> waited_;  // [stream][other stream] -> highest position already waited for
  std::vector<char> resident_;            // TensorId -> allocated now (in host order)
  // swap bookkeeping, by position
  std::vector<std::vector<size_t>> outs_at_, frees_at_, ins_at_, needs_at_;
  std::vector<int32_t> out_done_, in_done_;  // per action: events after copy-out / copy-in
  std::vector<int> free_point_;              // per action: the position after which its tensor is freed
  std::vector<std::vector<size_t>> extra_before_, extra_after_;  // ExtraCopy indices by position
  bool inline_copies_ = false;               // CopyStreams::Compute: copies on the compute streams
  // recomputation bookkeeping: replays by `before`, drops (recomputation, drop) by the position they free after
  std::vector<std::vector<size_t>> replays_at_;
  std::vector<std::vector<std::pair<size_t, size_t>>> drops_at_;
  std::map<TensorId, std::vector<std::pair<int, int>>> dropped_;  // tensor -> positions [from, to] it is dropped
  std::vector<TensorId> held_to_;  // tensors a replay holds past their last use: freed after the op at last_
  // host step (ZeRO-Offload): what moves where, the CPU worker stream, per host op the event after its step
  HostStepTensors hs_;
  std::vector<ParameterFetch> fetches_;  // fetch_parameters: by issue point
  size_t next_fetch_ = 0;
  std::vector<std::vector<TensorId>> fetch_frees_at_;  // by position: parameters freed after it
  void fetch_parameters_after(int pos);
  int host_ = -1;
  std::map<OpId, int32_t> step_done_;
};

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

void Lowerer::check_swaps() {
  const size_t na = plan_.actions.size();
  outs_at_.assign(static_cast<size_t>(n_), {});
  frees_at_.assign(static_cast<size_t>(n_), {});
  ins_at_.assign(static_cast<size_t>(n_), {});
  needs_at_.assign(static_cast<size_t>(n_), {});
  std::map<TensorId, std::vector<std::pair<int, size_t>>> spans;  // tensor -> (out_after, action)
  for (size_t a = 0; a < na; ++a) {
    const SwapAction& x = plan_.actions[a];
    const std::string who = "swap action " + std::to_string(a);
    if (x.tensor < 0 || static_cast<size_t>(x.tensor) >= g_.tensors().size()) fail(who + ": tensor " + std::to_string(x.tensor) + " is not in the graph");
    const std::string name = who + " (tensor '" + g_.tensor(x.tensor).name + "')";
    if (!(0 <= x.out_after && x.out_after <= x.in_issue_after && x.in_issue_after < x.in_needed_by && x.in_needed_by < n_))
      fail(name + ": needs 0 <= out_after <= in_issue_after < in_needed_by < " + std::to_string(n_) + ", got " +
           std::to_string(x.out_after) + ", " + std::to_string(x.in_issue_after) + ", " + std::to_string(x.in_needed_by));
    if (x.free_after != -1 && !(x.out_after <= x.free_after && x.free_after <= x.in_issue_after))
      fail(name + ": free_after " + std::to_string(x.free_after) + " must be -1 or within out_after .. in_issue_after (" +
           std::to_string(x.out_after) + " .. " + std::to_string(x.in_issue_after) + ")");
    const auto t = static_cast<size_t>(x.tensor);
    const bool persistent = g_.tensor(x.tensor).persistent;
    if (first_[t] < 0 || (!persistent && (first_[t] > x.out_after || last_[t] < x.in_needed_by)))
      fail(name + ": the tensor is not live from out_after to in_needed_by");
    for (int i = x.out_after + 1; i < x.in_needed_by; ++i) {
      const Op& op = g_.op(s_.order[static_cast<size_t>(i)]);
      const bool used = std::count(op.inputs.begin(), op.inputs.end(), x.tensor) ||
                        std::count(op.outputs.begin(), op.outputs.end(), x.tensor);
      if (used) fail(name + ": op '" + op.name + "' at position " + std::to_string(i) + " uses it while it is on the host");
    }
    spans[x.tensor].push_back({x.out_after, a});
    outs_at_[static_cast<size_t>(x.out_after)].push_back(a);
    ins_at_[static_cast<size_t>(x.in_issue_after)].push_back(a);
    needs_at_[static_cast<size_t>(x.in_needed_by)].push_back(a);
  }
  for (auto& [t, v] : spans) {
    std::sort(v.begin(), v.end());
    std::vector<size_t> earlier;
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0 && v[i].first < plan_.actions[v[i - 1].second].in_needed_by)
        fail("two swap actions of tensor '" + g_.tensor(t).name + "' overlap");
      check_copy_out(v[i].second, earlier);
      earlier.push_back(v[i].second);
    }
  }
  // Copy-ins issued after the same op go in the order they are needed (one H2D stream serves them in turn).
  for (auto& v : ins_at_)
    std::stable_sort(v.begin(), v.end(), [&](size_t a, size_t b) { return plan_.actions[a].in_needed_by < plan_.actions[b].in_needed_by; });
  free_point_ = resolve_free_points(g_, s_.order, s_.stream_of, plan_);
  for (size_t a = 0; a < na; ++a) frees_at_[static_cast<size_t>(free_point_[a])].push_back(a);
  check_recomputations();
  check_extra_copies();
}

// An action that drops its tensor without copying it needs a host copy that is still current: a copy-out (an
// earlier action's, or a to-host ExtraCopy) with no write to the tensor after it.
void Lowerer::check_copy_out(size_t a, const std::vector<size_t>& earlier) {
  const SwapAction& x = plan_.actions[a];
  if (x.copy_out) return;
  int copied_at = -1;  // the data on the host is the tensor as it was after this position
  for (size_t b : earlier) copied_at = std::max(copied_at, plan_.actions[b].in_needed_by - 1);
  for (const ExtraCopy& c : plan_.copies)
    if (c.tensor == x.tensor && c.to_host && c.pos <= x.out_after) copied_at = std::max(copied_at, c.pos);
  const std::string name = "swap action " + std::to_string(a) + " (tensor '" + g_.tensor(x.tensor).name + "')";
  if (copied_at < 0) fail(name + ": copy_out is false but no earlier copy put the tensor on the host");
  for (int i = copied_at + 1; i <= x.out_after; ++i) {
    const Op& op = g_.op(s_.order[static_cast<size_t>(i)]);
    if (std::count(op.outputs.begin(), op.outputs.end(), x.tensor))
      fail(name + ": copy_out is false but op '" + op.name + "' at position " + std::to_string(i) +
           " writes the tensor after its host copy was made");
  }
}

// An ExtraCopy moves data of a tensor that is on the device: live at its position and not swapped out there.
void Lowerer::check_extra_copies() {
  extra_before_.assign(static_cast<size_t>(n_), {});
  extra_after_.assign(static_cast<size_t>(n_), {});
  for (size_t i = 0; i < plan_.copies.size(); ++i) {
    const ExtraCopy& c = plan_.copies[i];
    const std::string who = "extra copy " + std::to_string(i);
    if (c.tensor < 0 || static_cast<size_t>(c.tensor) >= g_.tensors().size()) fail(who + ": tensor " + std::to_string(c.tensor) + " is not in the graph");
    if (c.pos < 0 || c.pos >= n_) fail(who + ": position " + std::to_string(c.pos) + " outside 0.." + std::to_string(n_ - 1));
    const auto t = static_cast<size_t>(c.tensor);
    const std::string name = who + " (tensor '" + g_.tensor(c.tensor).name + "')";
    if (first_[t] < 0 || (!g_.tensor(c.tensor).persistent && (c.pos < first_[t] || c.pos > last_[t])))
      fail(name + ": the tensor is not live at position " + std::to_string(c.pos));
    for (size_t a = 0; a < plan_.actions.size(); ++a)
      if (plan_.actions[a].tensor == c.tensor && free_point_[a] < c.pos && c.pos <= plan_.actions[a].in_issue_after)
        fail(name + ": the tensor is on the host at position " + std::to_string(c.pos));
    if (auto it = dropped_.find(c.tensor); it != dropped_.end())
      for (const auto& [from, to] : it->second)
        // A drop's gap ends with the replay before op `to`: after that op (a copy to the host) it is back.
        if (from <= c.pos && (c.to_host ? c.pos < to : c.pos <= to))
          fail(name + ": the tensor is dropped at position " + std::to_string(c.pos));
    (c.to_host ? extra_after_ : extra_before_)[static_cast<size_t>(c.pos)].push_back(i);
  }
}

// A recomputation's ops ran before it, write no non-persistent tensor they read, and write every tensor it drops;
// each drop frees a tensor that is used before the replay, not in the gap, and again at or after it.
void Lowerer::check_recomputations() {
  replays_at_.assign(static_cast<size_t>(n_), {});
  drops_at_.assign(static_cast<size_t>(n_), {});
  const std::vector<std::vector<int>> points = resolve_drop_points(g_, s_.order, plan_);
  const size_t nt = g_.tensors().size();
  for (size_t r = 0; r < plan_.recomputations.size(); ++r) {
    const Recomputation& rc = plan_.recomputations[r];
    const std::string who = "recomputation " + std::to_string(r);
    if (rc.before < 1 || rc.before >= n_)
      fail(who + ": before " + std::to_string(rc.before) + " is outside 1.." + std::to_string(n_ - 1));
    if (rc.ops.empty()) fail(who + ": re-runs no op");
    for (OpId o : rc.ops) {
      if (o < 0 || static_cast<size_t>(o) >= g_.ops().size()) fail(who + ": op " + std::to_string(o) + " is not in the graph");
      const Op& op = g_.op(o);
      if (pos_of_[static_cast<size_t>(o)] >= rc.before)
        fail(who + ": op '" + op.name + "' runs at position " + std::to_string(pos_of_[static_cast<size_t>(o)]) +
             ", not before position " + std::to_string(rc.before) + " (a replay re-runs ops that ran)");
      for (TensorId t : op.outputs)  // in place: only on a tensor an earlier op of the replay made again
        if (!g_.tensor(t).persistent && std::count(op.inputs.begin(), op.inputs.end(), t) &&
            !std::any_of(rc.ops.begin(), std::find(rc.ops.begin(), rc.ops.end(), o), [&](OpId e) {
              return std::count(g_.op(e).outputs.begin(), g_.op(e).outputs.end(), t) > 0;
            }))
          fail(who + ": op '" + op.name + "' writes tensor '" + g_.tensor(t).name +
               "', which it reads, and no op before it in the replay makes the tensor again (an in-place op re-run alone "
               "would apply twice)");
    }
    for (size_t d = 0; d < rc.drops.size(); ++d) {
      const TensorId t = rc.drops[d].tensor;
      if (t < 0 || static_cast<size_t>(t) >= nt) fail(who + ": drop of tensor " + std::to_string(t) + ", not in the graph");
      const std::string name = who + " (tensor '" + g_.tensor(t).name + "')";
      if (g_.tensor(t).persistent) fail(name + ": a persistent tensor cannot be dropped and recomputed");
      const bool written = std::any_of(rc.ops.begin(), rc.ops.end(), [&](OpId o) {
        return std::count(g_.op(o).outputs.begin(), g_.op(o).outputs.end(), t) > 0;
      });
      if (!written) fail(name + ": no op it re-runs writes the tensor");
      const int at = points[r][d];
      const auto ti = static_cast<size_t>(t);
      if (at < 0 || at < first_[ti] || at >= rc.before)
        fail(name + ": the tensor is not live after position " + std::to_string(at) + " to be dropped before position " +
             std::to_string(rc.before));
      if (last_[ti] < rc.before)
        fail(name + ": nothing uses the tensor at or after position " + std::to_string(rc.before) + ", where it is recomputed");
      for (int i = at + 1; i < rc.before; ++i) {
        const Op& op = g_.op(s_.order[static_cast<size_t>(i)]);
        if (std::count(op.inputs.begin(), op.inputs.end(), t) || std::count(op.outputs.begin(), op.outputs.end(), t))
          fail(name + ": op '" + op.name + "' at position " + std::to_string(i) + " uses it while it is dropped");
      }
      dropped_[t].push_back({at + 1, rc.before});
      drops_at_[static_cast<size_t>(at)].push_back({r, d});
    }
    replays_at_[static_cast<size_t>(rc.before)].push_back(r);
  }
  for (auto& [t, v] : dropped_) {
    std::sort(v.begin(), v.end());
    for (size_t i = 1; i < v.size(); ++i)
      if (v[i].first <= v[i - 1].second) fail("two drops of tensor '" + g_.tensor(t).name + "' overlap");
    for (size_t a = 0; a < plan_.actions.size(); ++a) {
      if (plan_.actions[a].tensor != t) continue;
      const int from = free_point_[a] + 1, to = plan_.actions[a].in_needed_by;
      for (const auto& [f, e] : v)
        if (f <= to && from <= e)
          fail("tensor '" + g_.tensor(t).name + "' is both swapped (positions " + std::to_string(from) + ".." +
               std::to_string(to) + ") and dropped (" + std::to_string(f) + ".." + std::to_string(e) + ")");
    }
  }
}

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
    for (TensorId t : g_.op(rc.ops[j]).inputs) last_reader[t] = j;
  std::vector<std::pair<TensorId, size_t>> transient;  // allocated for the replay only: freed after this index
  for (size_t j = 0; j < rc.ops.size(); ++j) {
    const Op& op = g_.op(rc.ops[j]);
    for (TensorId t : op.inputs)
      if (!resident_[static_cast<size_t>(t)])
        fail(who + ": op '" + op.name + "' reads tensor '" + g_.tensor(t).name + "', which is not on the device then");
    std::vector<TensorId> touched;
    for (const auto* v : {&op.inputs, &op.outputs})
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
    for (TensorId t : touched) note_use(users_[static_cast<size_t>(t)], s, pos);
    for (TensorId t : op.outputs) note_use(writers_[static_cast<size_t>(t)], s, pos);
    if (ws) emit(CmdKind::Free, s, -1, op.workspace);
    for (const auto& [t, last] : transient)
      if (last == j) free_tensor(t);
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
    if (!g_.tensor(t).persistent && first_[static_cast<size_t>(t)] == pos) alloc(t, s);
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

}  // namespace

Program lower(const Graph& g, const Schedule& schedule, const SwapPlan& swaps) {
  return Lowerer(g, schedule, swaps).run();
}

}  // namespace dlsim
