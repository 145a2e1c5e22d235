#pragma once
// DO NOT INCLUDE THIS FILE outside sim/: the executor's host side, behind simulate() (sim/executor.h).
//
// The Engine walks a Program as the host issues it: launch overheads, blocking allocator calls (the pool and
// the cudaMalloc/cudaFree costs read from its DeviceMemory), event records, waits and synchronisations, and
// the iteration bookkeeping. What the commands do on the GPU is the DeviceModel's (sim/device_model.h); the
// two share one EventQueue, so that every event, host or device, is ordered by (time, sequence).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/device_model.h"
#include "sim/event_queue.h"
#include "program/freed_ranges.h"
#include "sim/sim_run.h"

namespace dlsim::sim_internal {

// The DeviceMemory's call counters at one moment: the executor charges the calls a pool call made in between.
struct DeviceCallCounts {
  uint64_t mallocs = 0, frees = 0, bytes_malloced = 0, bytes_freed = 0;
  uint64_t maps = 0, unmaps = 0, bytes_mapped = 0, bytes_unmapped = 0;
  static DeviceCallCounts read(const DeviceMemory& d) {
    return {d.malloc_calls(), d.free_calls(), d.bytes_malloced(), d.bytes_freed(),
            d.map_calls(),    d.unmap_calls(), d.bytes_mapped(),  d.bytes_unmapped()};
  }
};

// Which part of the Program the host is issuing.
enum class Phase { Setup, Iterations, Teardown, Done };

// What a blocked host waits for.
enum class HostWait { None, DeviceIdle, Event, HeldFrees, QueueRoom };

// A point in one stream's work: the `record`-th record of the engine's own marker event of that stream
// (sim/executor.cc: each stream has one, beyond the Program's events). Marks complete in stream order.
struct StreamMark {
  int stream = 0;
  uint64_t record = 0;
};

// Where every stream that used a freed tensor was at its Free: its allocation stream first, then the streams
// RecordStream named. A reuse of the memory on another stream than one of these waits for that mark.
using FreeMarks = std::vector<StreamMark>;

// Memory a Free gave up while other streams may still touch it (RecordStream): it returns to the pool when
// every mark but the allocation stream's has completed (PyTorch's insert_events / process_events).
// Under launch: cuda-graph an iteration is issued as it is captured: a hold made then is `captured`, its events
// would be graph nodes that cannot be queried or waited on, so it lasts until the iteration's end whatever the
// device has done (PyTorch defers such a free's events until the capture ends; validate/gpu/held_frees.h).
struct HeldFree {
  DevPtr addr = 0;
  uint64_t bytes = 0;
  FreeMarks marks;
  bool captured = false;
};

class Engine : private DeviceListener {
 public:
  static constexpr uint16_t kHostStep = 0;  // the event type of the host's next step; the rest are the device's

  Engine(const Program& p, const SimContext& c, const SimOptions& o);
  RunResult run();

 private:
  void host_step();
  bool host_issue(const Command& c);  // false: the host is busy or blocked; a later event resumes it
  bool do_alloc(const Command& c);
  bool do_free(const Command& c);
  bool do_record_stream(const Command& c);
  StreamMark mark(int stream);  // records the stream's marker event now
  bool mark_done(const StreamMark& m) const;
  bool held_free_done(const HeldFree& h) const;
  bool waitable_frees_held() const;  // a hold an allocation may wait for (not captured) exists
  void release_done_frees();  // hands every held free whose streams are past it to the pool
  void release_captured_frees();  // the iteration's end under launch: cuda-graph: its holds go back
  void give_back(DevPtr addr, uint64_t bytes, FreeMarks marks);  // pool.deallocate + the range's marks
  void order_after_freed(DevPtr addr, uint64_t bytes, int stream);  // waits of `stream` for earlier owners
  bool charge_device_calls(const DeviceCallCounts& before);
  void end_of_section();
  void resume_host_at(TimeNs t);
  TimeNs launch_cost(const Command& c);  // what issuing a kernel or copy costs the host now
  void enqueue(int stream, const StreamCmd& c);
  void settle();  // the device as far as it goes at now_, then wake the host if what it waits for happened
  bool host_wait_over() const;  // what the blocked host waits for has happened
  void command_done(int iteration) override;  // DeviceListener
  void maybe_close_iteration(int i);
  [[noreturn]] void bad(const std::string& what) const;
  const std::vector<Command>& section() const;
  size_t tally_index(int iteration) const { return static_cast<size_t>(iteration + 1); }

  const Program& prog_;
  const SimContext& ctx_;
  const SimOptions& opt_;
  RunResult r_;
  EventQueue q_{4096};
  TimeNs now_ = 0;
  DeviceModel device_;
  bool host_stopped_ = false;  // out of memory: the host issues nothing more; queued work drains

  // host state
  Phase phase_ = Phase::Setup;
  int iteration_ = -1;
  size_t pc_ = 0;
  bool host_scheduled_ = false;
  bool has_pending_ = false;  // a launched command that joins its stream when the launch overhead is paid
  int pending_stream_ = 0;
  StreamCmd pending_cmd_;
  HostWait wait_ = HostWait::None;
  int32_t wait_event_ = -1;
  uint64_t wait_record_ = 0;
  int wait_stream_ = 0;  // HostWait::QueueRoom: the stream whose launch queue is full
  TimeNs cost_after_idle_ = 0;
  bool in_alloc_call_ = false;
  TimeNs alloc_call_start_ = 0;
  int alloc_call_iteration_ = 0;
  std::vector<uint64_t> records_issued_;
  std::vector<int64_t> pending_;    // commands not yet done, per iteration (index iteration + 1)
  std::vector<uint8_t> host_done_;  // the host has issued all of the iteration
  std::vector<TimeNs> iter_start_, iter_end_;
  std::vector<double> occupancy_at_start_, occupancy_at_end_;  // DeviceModel::occupancy_integral there
  bool graph_launch_due_ = false;  // launch: cuda-graph and an iteration begins: the host pays the graph launch
  // launch: eager on a hardware file with host_cpu.pytorch_eager: each op's host cost (hw/eager_host_model.h);
  // empty otherwise (every launch costs launch_overhead_ns). once_charged_[op]: the iteration whose once-per-step
  // cost that op has paid (a recomputation launches it again without paying it twice).
  EagerHostCharges eager_;
  std::vector<int> once_charged_;
  // Host time spent issuing (launch costs, graph launches, allocator calls, not waits), per iteration (index
  // iteration + 1).
  std::vector<TimeNs> host_busy_;
  bool reissue_ = false;  // the command just issued runs again when the host resumes (an allocation retried)

  // memory state
  std::vector<DevPtr> addr_;
  std::vector<uint8_t> live_;
  std::vector<int16_t> alloc_stream_;                 // TensorId -> the stream it was allocated for
  std::vector<std::vector<int16_t>> used_on_;         // TensorId -> other streams named by RecordStream
  uint64_t live_bytes_ = 0;
  // Cross-stream memory safety (programs with several streams): markers, held frees, freed ranges.
  bool multi_stream_ = false;
  int32_t first_marker_event_ = 0;          // stream s's marker event is first_marker_event_ + s
  std::vector<uint64_t> marks_issued_;      // per stream
  std::vector<HeldFree> held_;              // in Free order
  FreedRanges<FreeMarks> freed_;            // where each range the pool took back was freed
  std::vector<uint64_t> wait_for_;          // order_after_freed's scratch, kept to spare an allocation per Alloc
};

}  // namespace dlsim::sim_internal
