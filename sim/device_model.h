#pragma once
// The device side of the simulator: the GPU as the host's commands reach it, behind a narrow interface, so that
// a richer model (wave dispatch, bandwidth contention between kernels and copies) replaces this class without
// touching the host side (sim/internal/engine.h), as SimGrid keeps its models apart from the engine that
// drives them. What it models:
// - Streams: FIFOs of StreamCmds, each running its head when the head may start. A RecordEvent completes at
//   once when it reaches the head; a WaitEvent holds its stream until the record it waits for has completed.
// - Activities: a kernel or a copy in progress, in a reused slot. Kernels share the SMs as a fluid (demand =
//   KernelCost::sm_fraction, max-min fair when the demands exceed the GPU: sim/fluid_share.h); a copy first
//   takes TransferModel::latency, then moves its bytes with the copies in flight in its direction (equal
//   shares), or, with fewer than two copy engines, one copy at a time in the order they reached the engine.
// - Sharing groups: the kernels, and one group per copy engine direction. Rates are solved again only when a
//   group's membership changes; each member whose rate changed gets a new completion event, and its old one
//   goes stale through a generation counter.
//
// The interface: enqueue() a command on a stream; settle() runs every stream as far as it can go at `now`;
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
#include "sim/program.h"
#include "sim/trace.h"
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
  DeviceModel(const Graph& graph, const GpuSpec& gpu, const KernelCostModel& kernels, const TransferModel& link,
              int num_streams, int num_events, EventQueue& queue, DeviceListener& listener, Trace* trace);

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
  // How many records of `event` have completed (records complete in order of issue).
  uint64_t records_done(int32_t event) const { return records_done_[static_cast<size_t>(event)]; }

 private:
  struct Stream {
    std::deque<StreamCmd> fifo;
    bool busy = false;  // its head is a kernel or copy in progress
  };
  // A kernel or copy in progress, in a fixed slot (slots are reused; events name them).
  struct Activity {
    bool in_use = false;
    bool kernel = true;
    bool to_host = false;
    int stream = 0;
    int group = 0;         // the sharing group it runs in
    TimeNs start = 0;
    TimeNs last = 0;       // when `remaining` was last brought up to date
    double remaining = 0;  // standalone ns of work left
    double rate = 0;       // standalone ns of progress per ns
    double demand = 1;     // SM share (kernels)
    uint32_t generation = 0;
    StreamCmd cmd;
  };
  enum Group { kKernels = 0, kCopyH2D = 1, kCopyD2H = 2, kNumGroups = 3 };

  bool advance_stream(int s);  // true when it completed an event record (other streams may go on)
  void start_activity(int s, const StreamCmd& c);
  void join_group(uint32_t slot);
  void resolve_group(int g);
  void finish_activity(uint32_t slot);
  void command_done(int iteration);
  const KernelCost& kernel_cost(OpId op);

  const Graph& graph_;
  const KernelCostModel& kernels_;
  const TransferModel& link_;
  const std::string& gpu_file_;  // named by the error when a time would pass the clock's bound
  EventQueue& queue_;
  DeviceListener& listener_;
  Trace* trace_;
  const bool serial_copies_;  // one copy engine: copies are served one at a time
  TimeNs now_ = 0;

  std::vector<Stream> streams_;
  std::vector<Activity> acts_;
  std::vector<uint32_t> free_slots_;
  std::vector<uint32_t> members_[kNumGroups];  // in the order they joined
  std::vector<uint64_t> records_done_;
  int64_t pending_ = 0;  // commands enqueued and not yet done
  std::vector<KernelCost> costs_;  // by op, computed on first launch
  std::vector<uint8_t> cost_known_;
  std::vector<double> scratch_demands_, scratch_rates_;
  std::vector<uint32_t> scratch_order_;
};

}  // namespace dlsim
