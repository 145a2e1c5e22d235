#pragma once
// The executor's internals, shared by sim/executor.cc (the run and the host side) and sim/engine_device.cc
// (streams, kernels and copies). Not part of the API: call simulate() (sim/executor.h).
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "sim/event_queue.h"
#include "sim/executor.h"

namespace dlsim::sim_engine {

enum EventType : uint16_t {
  kHostStep,        // the host is free to issue its next command
  kActivityDone,    // a kernel or copy finished (payload: activity slot)
  kLatencyDone,     // a copy's fixed latency is over; it starts moving bytes (payload: activity slot)
};

// A command waiting in a stream's FIFO.
// The DeviceMemory's call counters at one moment: the executor charges the calls a pool call made in between.
struct DeviceCallCounts {
  uint64_t mallocs = 0, frees = 0, bytes_malloced = 0, bytes_freed = 0;
  uint64_t maps = 0, unmaps = 0, bytes_mapped = 0, bytes_unmapped = 0;
  static DeviceCallCounts read(const DeviceMemory& d) {
    return {d.malloc_calls(), d.free_calls(), d.bytes_malloced(), d.bytes_freed(),
            d.map_calls(),    d.unmap_calls(), d.bytes_mapped(),  d.bytes_unmapped()};
  }
};

struct StreamCmd {
  CmdKind kind = CmdKind::Launch;
  int iteration = 0;   // -1 setup, N teardown
  OpId op = -1;
  TensorId tensor = kNoTensor;
  int32_t event = -1;
  uint64_t record = 0;  // RecordEvent: this record's number; WaitEvent: the record it waits for
};

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
  int group = 0;       // the shared resource it runs on (kKernels, or a copy engine)
  TimeNs start = 0;
  TimeNs last = 0;     // when `remaining` was last brought up to date
  double remaining = 0;  // standalone ns of work left
  double rate = 0;       // standalone ns of progress per ns
  double demand = 1;     // SM share (kernels)
  uint32_t generation = 0;
  StreamCmd cmd;
};

enum Group { kKernels = 0, kCopyH2D = 1, kCopyD2H = 2, kNumGroups = 3 };

enum class HostWait { None, DeviceIdle, Event };

class Engine {
 public:
  Engine(const Program& p, const SimContext& c, const SimOptions& o) : prog_(p), ctx_(c), opt_(o) {}
  RunResult run();

 private:
  // host
  void host_step();
  bool host_issue(const Command& c);  // false: the host is busy or blocked; a later event resumes it
  bool do_alloc(const Command& c);
  bool do_free(const Command& c);
  bool charge_device_calls(const DeviceCallCounts& before);
  void end_of_section();
  void resume_host_at(TimeNs t);
  void enqueue(int stream, const StreamCmd& c);
  [[noreturn]] void bad(const std::string& what) const;
  const std::vector<Command>& section() const;
  // device
  void settle();
  bool advance_stream(int s);
  void start_activity(int s, const StreamCmd& c);
  void join_group(uint32_t slot);
  void resolve_group(int g);
  void finish_activity(uint32_t slot);
  void command_done(int iteration);
  void maybe_close_iteration(int i);
  bool device_idle() const { return pending_total_ == 0; }
  const KernelCost& kernel_cost(OpId op);
  size_t tally_index(int iteration) const { return static_cast<size_t>(iteration + 1); }

  const Program& prog_;
  const SimContext& ctx_;
  const SimOptions& opt_;
  RunResult r_;
  EventQueue q_{4096};
  TimeNs now_ = 0;
  bool host_stopped_ = false;  // out of memory: the host issues nothing more; queued work drains

  // host state
  int phase_ = 0;  // 0 setup, 1 iterations, 2 teardown, 3 done
  int iteration_ = -1;
  size_t pc_ = 0;
  bool host_scheduled_ = false;
  bool has_pending_ = false;  // a launched command that joins its stream when the launch overhead is paid
  int pending_stream_ = 0;
  StreamCmd pending_cmd_;
  HostWait wait_ = HostWait::None;
  int32_t wait_event_ = -1;
  uint64_t wait_record_ = 0;
  TimeNs cost_after_idle_ = 0;
  bool in_alloc_call_ = false;
  TimeNs alloc_call_start_ = 0;
  int alloc_call_iteration_ = 0;

  // memory state
  std::vector<DevPtr> addr_;
  std::vector<uint8_t> live_;
  uint64_t live_bytes_ = 0;

  // device state
  std::vector<Stream> streams_;
  std::vector<Activity> acts_;
  std::vector<uint32_t> free_slots_;
  std::vector<uint32_t> members_[kNumGroups];  // in the order they joined
  bool serial_copies_ = false;
  std::vector<uint64_t> records_issued_, records_done_;
  std::vector<int64_t> pending_;  // commands not yet done, per iteration (index iteration + 1)
  int64_t pending_total_ = 0;
  std::vector<uint8_t> host_done_;  // the host has issued all of the iteration
  std::vector<TimeNs> iter_start_, iter_end_;
  std::vector<KernelCost> costs_;
  std::vector<uint8_t> cost_known_;
  std::vector<double> scratch_demands_, scratch_rates_;
  std::vector<uint32_t> scratch_order_;
};

}  // namespace dlsim::sim_engine
