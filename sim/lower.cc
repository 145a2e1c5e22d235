#include "sim/lower.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace dlsim {

namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("lower: " + what); }

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
  void check_swaps();
  void emit(CmdKind k, int stream, OpId op = -1, TensorId t = kNoTensor, int32_t ev = -1);
  void wait_for_op(int stream, int pos);
  void note_use(std::vector<Use>& uses, int stream, int pos);
  void wait_for_other_users(TensorId t, int stream);
  void alloc(TensorId t, int stream);
  void free_tensor(TensorId t);
  void lower_op(int pos);
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
  std::vector<int32_t> copied_in_event_;  // TensorId -> event after its copy-in, -1 none
  std::vector<std::vector<int>> waited_;  // [stream][other stream] -> highest position already waited for
  // swap bookkeeping, by position
  std::vector<std::vector<size_t>> outs_at_, frees_at_, ins_at_, needs_at_;
  std::vector<int32_t> out_done_, in_done_;  // per action: events after copy-out / copy-in
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
  if (s_.num_streams < 1) fail("schedule has num_streams " + std::to_string(s_.num_streams) + " (must be >= 1)");
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

void Lowerer::compute_lifetimes() {
  const size_t nt = g_.tensors().size();
  first_.assign(nt, -1);
  last_.assign(nt, -1);
  for (int i = 0; i < n_; ++i) {
    const Op& op = g_.op(s_.order[static_cast<size_t>(i)]);
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
  std::map<TensorId, std::vector<std::pair<int, int>>> spans;  // tensor -> [out_after, in_needed_by]
  for (size_t a = 0; a < na; ++a) {
    const SwapAction& x = plan_.actions[a];
    const std::string who = "swap action " + std::to_string(a);
    if (x.tensor < 0 || static_cast<size_t>(x.tensor) >= g_.tensors().size()) fail(who + ": tensor " + std::to_string(x.tensor) + " is not in the graph");
    const std::string name = who + " (tensor '" + g_.tensor(x.tensor).name + "')";
    if (!(0 <= x.out_after && x.out_after <= x.in_issue_after && x.in_issue_after < x.in_needed_by && x.in_needed_by < n_))
      fail(name + ": needs 0 <= out_after <= in_issue_after < in_needed_by < " + std::to_string(n_) + ", got " +
           std::to_string(x.out_after) + ", " + std::to_string(x.in_issue_after) + ", " + std::to_string(x.in_needed_by));
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
    spans[x.tensor].push_back({x.out_after, x.in_needed_by});
    outs_at_[static_cast<size_t>(x.out_after)].push_back(a);
    ins_at_[static_cast<size_t>(x.in_issue_after)].push_back(a);
    needs_at_[static_cast<size_t>(x.in_needed_by)].push_back(a);
  }
  for (auto& [t, v] : spans) {
    std::sort(v.begin(), v.end());
    for (size_t i = 1; i < v.size(); ++i)
      if (v[i].first < v[i - 1].second) fail("two swap actions of tensor '" + g_.tensor(t).name + "' overlap");
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

// Before the memory of `t` can be reused on `stream`, every other stream's use of it must be done.
void Lowerer::wait_for_other_users(TensorId t, int stream) {
  std::vector<Use> uses = users_[static_cast<size_t>(t)];
  std::sort(uses.begin(), uses.end(), [](const Use& a, const Use& b) { return a.stream < b.stream; });
  for (const Use& u : uses)
    if (u.stream != stream) wait_for_op(stream, u.pos);
}

void Lowerer::alloc(TensorId t, int stream) {
  const auto i = static_cast<size_t>(t);
  alloc_stream_[i] = stream;
  users_[i].clear();
  writers_[i].clear();
  copied_in_event_[i] = -1;
  emit(CmdKind::Alloc, stream, -1, t);
}

void Lowerer::free_tensor(TensorId t) {
  const int a = alloc_stream_[static_cast<size_t>(t)];
  if (multi_) wait_for_other_users(t, a);
  emit(CmdKind::Free, a, -1, t);
}

void Lowerer::lower_op(int pos) {
  const OpId id = s_.order[static_cast<size_t>(pos)];
  const Op& op = g_.op(id);
  const int s = stream_at(pos);

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
  for (size_t a : needs_at_[static_cast<size_t>(pos)]) emit(CmdKind::WaitEvent, s, -1, kNoTensor, in_done_[a]);

  std::vector<TensorId> touched;  // inputs then outputs, each once
  for (TensorId t : op.inputs)
    if (std::find(touched.begin(), touched.end(), t) == touched.end()) touched.push_back(t);
  for (TensorId t : op.outputs)
    if (std::find(touched.begin(), touched.end(), t) == touched.end()) touched.push_back(t);
  for (TensorId t : touched)
    if (!g_.tensor(t).persistent && first_[static_cast<size_t>(t)] == pos) alloc(t, s);
  // A workspace of 0 bytes (a calibrated algorithm that needs none) is no allocation at all.
  const bool ws = op.workspace != kNoTensor && g_.tensor(op.workspace).bytes > 0;
  if (ws) emit(CmdKind::Alloc, s, -1, op.workspace);
  emit(CmdKind::Launch, s, id);
  if (multi_) emit(CmdKind::RecordEvent, s, -1, kNoTensor, pos);
  for (TensorId t : touched) note_use(users_[static_cast<size_t>(t)], s, pos);
  for (TensorId t : op.outputs) note_use(writers_[static_cast<size_t>(t)], s, pos);
  if (ws) emit(CmdKind::Free, s, -1, op.workspace);
  for (TensorId t : touched)
    if (!g_.tensor(t).persistent && last_[static_cast<size_t>(t)] == pos) free_tensor(t);

  for (size_t a : outs_at_[static_cast<size_t>(pos)]) {  // copy-out after the tensor's last writes
    const TensorId t = plan_.actions[a].tensor;
    const auto ti = static_cast<size_t>(t);
    for (const Use& w : writers_[ti]) wait_for_op(d2h_, w.pos);
    if (copied_in_event_[ti] >= 0) emit(CmdKind::WaitEvent, d2h_, -1, kNoTensor, copied_in_event_[ti]);
    emit(CmdKind::CopyOut, d2h_, -1, t);
    emit(CmdKind::RecordEvent, d2h_, -1, kNoTensor, out_done_[a]);
    int free_at = plan_.actions[a].in_issue_after;  // after the next launch on the allocation stream
    for (int q = pos + 1; q < free_at; ++q)
      if (stream_at(q) == alloc_stream_[ti]) {
        free_at = q;
        break;
      }
    frees_at_[static_cast<size_t>(free_at)].push_back(a);
  }
  for (size_t a : frees_at_[static_cast<size_t>(pos)]) {  // the copy is done before the memory is reused
    const TensorId t = plan_.actions[a].tensor;
    emit(CmdKind::WaitEvent, alloc_stream_[static_cast<size_t>(t)], -1, kNoTensor, out_done_[a]);
    free_tensor(t);
  }
  for (size_t a : ins_at_[static_cast<size_t>(pos)]) {
    const SwapAction& x = plan_.actions[a];
    const int c = stream_at(x.in_needed_by);
    alloc(x.tensor, c);
    const int32_t alloc_point = next_event_++;  // the memory may be reused from work queued on c before this
    emit(CmdKind::RecordEvent, c, -1, kNoTensor, alloc_point);
    emit(CmdKind::WaitEvent, h2d_, -1, kNoTensor, alloc_point);
    emit(CmdKind::WaitEvent, h2d_, -1, kNoTensor, out_done_[a]);
    emit(CmdKind::CopyIn, h2d_, -1, x.tensor);
    emit(CmdKind::RecordEvent, h2d_, -1, kNoTensor, in_done_[a]);
    copied_in_event_[static_cast<size_t>(x.tensor)] = in_done_[a];
  }
}

// Stream 0 waits for every other stream, then every stream waits for stream 0: the next iteration starts
// on the device only after this one is complete everywhere.
void Lowerer::join_streams() {
  const int all = p_.num_streams;
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
  compute_lifetimes();
  check_swaps();
  const bool swaps = !plan_.actions.empty();
  p_.num_compute_streams = s_.num_streams;
  p_.num_streams = s_.num_streams + (swaps ? 2 : 0);
  if (swaps) {
    d2h_ = s_.num_streams;
    h2d_ = s_.num_streams + 1;
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
  copied_in_event_.assign(nt, -1);
  waited_.assign(static_cast<size_t>(p_.num_streams), std::vector<int>(static_cast<size_t>(p_.num_streams), -1));
  Graph::Dag dag;
  if (multi_) {
    dag = g_.dag();
    dag_ = &dag;
  }

  out_ = &p_.setup;
  for (const Tensor& t : g_.tensors())
    if (t.persistent) emit(CmdKind::Alloc, 0, -1, t.id);
  out_ = &p_.iteration;
  for (int i = 0; i < n_; ++i) lower_op(i);
  if (multi_) join_streams();
  out_ = &p_.teardown;
  for (const Tensor& t : g_.tensors())
    if (t.persistent) emit(CmdKind::Free, 0, -1, t.id);
  prune_events();
  return std::move(p_);
}

}  // namespace

Program lower(const Graph& g, const Schedule& schedule, const SwapPlan& swaps) {
  return Lowerer(g, schedule, swaps).run();
}

}  // namespace dlsim
