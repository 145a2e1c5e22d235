#pragma once
// The lowering's working state (program/lower.h is the API): one Lowerer turns a graph, a schedule and a swap plan
// into a Program. Its methods live in three files by concern: lower.cc (ops, allocations, frees, events, the
// iteration), lower_swaps.cc (copies, recomputation replays, the host step), lower_plan_check.cc (what a swap
// plan must satisfy before it is lowered).
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "policies/concurrency/concurrency_policy.h"
#include "policies/swap/core/host_step.h"
#include "policies/swap/core/swap_policy.h"
#include "program/program.h"
#include "workloads/graph.h"

namespace dlsim::program_internal {

[[noreturn]] inline void fail(const std::string& what) { throw std::invalid_argument("lower: " + what); }

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

}  // namespace dlsim::program_internal
