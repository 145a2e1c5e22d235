#pragma once
// The device side of the simulator: the GPU as the host's commands reach it, behind a narrow interface, so that
// the host side (sim/internal/engine.h) does not depend on how the GPU is modelled, as SimGrid keeps its models
// apart from the engine that drives them. What it models:
// - Connections: streams reach the GPU through GpuSpec::concurrency.max_connections hardware queues
//   (CUDA_DEVICE_MAX_CONNECTIONS); stream s feeds queue s % max_connections. Each queue is a FIFO of the
//   commands of its streams in issue order, running its head when the head may start: with more streams than
//   queues, streams sharing one are serialised (the false dependency). A RecordEvent completes at once when it
//   reaches the head; a WaitEvent holds its queue until the record it waits for has completed.
// - Kernels as grids of thread blocks (KernelCost::blocks, blocks_per_sm): the GPU has SMs x blocks_per_sm
//   slots for a kernel's blocks, and a block of a kernel with k blocks per SM takes 1 / (SMs x k) of the GPU.
//   The block scheduler serves the resident kernels in order of stream priority (Program::stream_priority,
//   lower first, as CUDA), then of arrival: each takes as many of its remaining blocks as the free slots hold,
//   as a "wave" that ends together; a kernel's standalone time divided by its number of full waves is the
//   length of one wave. So a kernel that fills the GPU keeps it until its last wave, which leaves slots to the
//   next kernel (tail-only, "leftover" overlap), while small kernels run side by side.
// - Contention between resident kernels, piecewise constant between dispatch events: HBM bandwidth (a kernel's
//   standalone demand is its bytes over its time, in proportion to its resident blocks; when the demands exceed
//   concurrency.hbm_share_fraction of the peak, a kernel slows in proportion to how memory-bound it is, its
//   demand over that bandwidth), and a general slowdown per co-resident kernel (concurrency.co_run_slowdown, in
//   full from one that holds at least as many slots, in proportion from a smaller one), and the copies: each
//   copy direction moving data slows every kernel by concurrency.copy_slowdown (DMA traffic in HBM and L2).
//   A kernel's progress is counted in standalone nanoseconds; rates and completions are solved again only when
//   the resident set or a kernel's blocks change (a wave starts or ends), and a changed completion event
//   replaces the old one through a generation counter.
// - Copies: a copy first takes TransferModel::latency, then moves its bytes with the copies in flight in its
//   direction (equal shares), or, with fewer than two copy engines, one copy at a time in the order they
//   reached the engine.
// - Host streams (Program::num_host_streams, the last streams): CPU worker threads, each with a queue of its own
//   (not one of the GPU's connections). A HostCompute takes host_step_ns (policies/swap/core/host_step.h) at
//   GpuSpec::host_adam_bytes_per_s and uses nothing of the GPU; it is traced as an op on its host stream.
//
// The interface: enqueue() a command on a stream; settle() runs every queue as far as it can go at `now`;
// the device's next completions are events it schedules in the executor's EventQueue, so that host and device
// share one (time, sequence) order, and the executor hands each one back through handle(); idle() says
// whether anything is queued or running. The device tells the host through DeviceListener when a command
// leaves its stream (the host counts an iteration's commands to know when it ends).
#include <cstdint>
#include <deque>
#include <vector>

#include "hw/cost_model.h"
#include "hw/gpu_spec.h"
#include "sim/event_queue.h"
#include "program/program.h"
#include "program/trace.h"
#include "workloads/graph.h"

namespace dlsim {

// A command waiting in a stream's FIFO: what the host issued, tagged with the iteration it belongs to.
struct StreamCmd {
  CmdKind kind = CmdKind::Launch;
  int iteration = 0;    // -1 setup, N teardown
  OpId op = -1;
  TensorId tensor = kNoTensor;
  int32_t event = -1;
  uint64_t record = 0;  // RecordEvent: this record's number; WaitEvent: the record it waits for
};

class DeviceListener {
 public:
  virtual ~DeviceListener() = default;
  // A command of `iteration` left its stream: a kernel or copy finished, an event was recorded or waited for.
  virtual void command_done(int iteration) = 0;
};

class DeviceModel {
 public:
  // The event types the device schedules; the executor's own (the host's next step) is type 0.
  enum EventType : uint16_t {
    kActivityDone = 1,  // a kernel or copy finished (payload: activity slot)
    kLatencyDone = 2,   // a copy's fixed latency is over; it starts moving bytes (payload: activity slot)
  };
  static bool owns(const Event& e) { return e.type == kActivityDone || e.type == kLatencyDone; }

  // `trace`: where finished kernels and copies are recorded (ops, copies), or null to record nothing.
  // `priorities`: per stream (lower runs first), or empty for all equal.
  DeviceModel(const Graph& graph, const GpuSpec& gpu, const KernelCostModel& kernels, const TransferModel& link,
              int num_streams, int num_events, EventQueue& queue, DeviceListener& listener, Trace* trace,
              const std::vector<int>& priorities = {}, int num_host_streams = 0);

  // Per OpId, the kernel variant each launch runs (Program::kernel_variant; empty: variant 0, the model's cost()).
  void set_kernel_variants(std::vector<uint8_t> v) { variants_ = std::move(v); }
  // The CPU's fp32-state rate for HostCompute (bytes/s); by default GpuSpec::host_adam_bytes_per_s.
  void set_host_rate(double bytes_per_s) { host_rate_ = bytes_per_s; }

  // Appends a command to a stream's FIFO; it starts at the next settle(). Streams and events are checked by
  // the caller.
  void enqueue(int stream, const StreamCmd& c);
  // Runs every stream as far as it can go at `now`: records events, passes satisfied waits, starts the kernel
  // or copy at each head.
  void settle(TimeNs now);
  // One of the device's own events (owns(e)), popped from the queue at `now`; a stale one is ignored.
  void handle(const Event& e, TimeNs now);
  // Nothing queued or running on any stream.
  bool idle() const { return pending_ == 0; }
  // Commands of `stream` enqueued and not yet done (CUDA's launch queue of that stream).
  int64_t queued(int stream) const { return queued_[static_cast<size_t>(stream)]; }
  // How many records of `event` have completed (records complete in order of issue).
  uint64_t records_done(int32_t event) const { return records_done_[static_cast<size_t>(event)]; }
  // The share of the GPU's block slots the resident kernels hold now, in [0, 1], and its integral over time
  // up to `now` (share x ns): the mean occupancy over an interval is the difference over its length.
  double sm_occupancy() const { return occupancy_; }
  double occupancy_integral(TimeNs now) const {
    return occupancy_integral_ + occupancy_ * static_cast<double>(now - occupancy_since_);
  }
  // For the commands of `iteration` that have finished: the time during which at least one of its kernels or copies
  // ran (PyTorch's profiler's "GPU busy"; its own work only, whatever other iterations overlapped it), and the time
  // its HostCompute steps took on the CPU workers. Counted by iteration rather than over an interval of time, so
  // that iterations that overlap (ZeRO-Offload's delayed update runs one's GPU work beside the last one's CPU step)
  // are each charged their own work.
  TimeNs device_busy(int iteration) const;
  TimeNs host_worker_busy(int iteration) const;

 private:
  // A hardware queue (connection): the commands of its streams in issue order.
  struct Queued {
    int stream = 0;
    StreamCmd cmd;
  };
  struct Connection {
    std::deque<Queued> fifo;
    bool busy = false;  // its head is a kernel or copy in progress
  };
  // Blocks of one kernel dispatched together, `blocks` at a time for `count` waves back to back: they hold
  // `blocks` slots until the kernel's progress reaches v_end. Several waves are one entry only while no other
  // kernel waits for slots (one event instead of one per wave); when one starts waiting the entry is cut back to
  // the wave in progress and the rest returned to blocks_left.
  struct Wave {
    double v_start = 0;
    double v_end = 0;
    int64_t blocks = 0;
    int64_t count = 1;
  };
  // A kernel or copy in progress, in a fixed slot (slots are reused; events name them).
  struct Activity {
    bool in_use = false;
    bool kernel = true;
    bool host = false;     // a HostCompute: a fixed time on a CPU worker
    bool to_host = false;
    int stream = 0;
    int group = 0;         // copies: the sharing group it runs in
    TimeNs start = 0;
    TimeNs last = 0;       // when `remaining` (copies) or `v` (kernels) was last brought up to date
    double remaining = 0;  // copies: standalone ns of work left
    double rate = 0;       // standalone ns of progress per ns
    uint32_t generation = 0;
    StreamCmd cmd;
    // kernels
    int priority = 0;
    uint64_t arrival = 0;       // order of arrival at the block scheduler
    double v = 0;               // standalone ns of progress so far
    double wave_ns = 0;         // standalone length of one wave
    double block_share = 0;     // share of the GPU one block takes: 1 / (SMs x blocks_per_sm)
    int64_t blocks_left = 0;    // not yet dispatched
    int64_t resident = 0;       // dispatched and running
    int64_t full_resident = 1;  // resident blocks when it has the GPU to itself: min(blocks, slots)
    double bandwidth = 0;       // bytes/s it moves standalone (with full_resident blocks)
    double memory_bound = 0;    // that bandwidth over the shared bandwidth, at most 1
    std::vector<Wave> waves;    // in flight
    double last_wave_end = 0;   // v_end of its wave that ended last, and when
    TimeNs last_wave_time = -1;
    double event_v = -1;        // the v_end its pending completion event is for (-1: none)
  };
  enum Group { kCopyH2D = 0, kCopyD2H = 1, kNumGroups = 2 };

  bool advance_connection(int c);  // true when it completed an event record (other queues may go on)
  void start_activity(int s, const StreamCmd& c);
  void start_kernel(uint32_t slot);
  void kernel_event(uint32_t slot);
  void schedule_kernels();  // dispatch blocks to free slots, solve the rates, re-key the completions
  void join_group(uint32_t slot);
  void resolve_group(int g);
  int copy_directions_busy() const;        // copy groups with a copy in flight (one with a single engine)
  void copies_changed(int busy_before);    // re-solves the kernels' rates when copy_slowdown applies
  void finish_activity(uint32_t slot);
  void command_done(int stream, int iteration);
  void set_occupancy(double occupancy);
  const KernelCost& kernel_cost(OpId op);

  const Graph& graph_;
  const GpuSpec& gpu_;
  const KernelCostModel& kernels_;
  const TransferModel& link_;
  const std::string& gpu_file_;  // named by the error when a time would pass the clock's bound
  EventQueue& queue_;
  DeviceListener& listener_;
  Trace* trace_;
  std::vector<uint8_t> variants_;
  double host_rate_;
  const bool serial_copies_;  // one copy engine: copies are served one at a time
  TimeNs now_ = 0;

  std::vector<int> stream_connection_, stream_priority_;
  std::vector<Connection> connections_;
  std::vector<Activity> acts_;
  std::vector<uint32_t> free_slots_;
  std::vector<uint32_t> members_[kNumGroups];  // copies in flight per group, in the order they joined
  std::vector<uint32_t> resident_kernels_;      // kernels started, in dispatch order (priority, arrival)
  uint64_t arrivals_ = 0;
  std::vector<uint64_t> records_done_;
  int64_t pending_ = 0;  // commands enqueued and not yet done
  std::vector<int64_t> queued_;  // the same per stream
  std::vector<KernelCost> costs_;  // by op, computed on first launch
  std::vector<uint8_t> cost_known_;
  double occupancy_ = 0, occupancy_integral_ = 0;
  TimeNs occupancy_since_ = 0;
  struct IterationBusy {
    int64_t active = 0;  // its kernels and copies in progress
    TimeNs since = 0;    // when the first of them started
    TimeNs device = 0, host_worker = 0;
  };
  std::vector<IterationBusy> busy_;  // by iteration + 1 (setup is -1), grown as iterations arrive
  IterationBusy& busy_of(int iteration);
  void set_busy(int iteration, int64_t delta);
};

}  // namespace dlsim
