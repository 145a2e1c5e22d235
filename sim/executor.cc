#include "sim/executor.h"
#include "common/byte_units.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/sim_time.h"

#include "sim/internal/engine.h"

namespace dlsim {
namespace sim_internal {

namespace {
}  // namespace

Engine::Engine(const Program& p, const SimContext& c, const SimOptions& o)
    : prog_(p),
      ctx_(c),
      opt_(o),
      device_(c.graph, c.gpu, c.kernels, c.link, p.num_streams,
              std::max(p.num_events, 0) + (p.num_streams > 1 ? p.num_streams : 0), q_, *this,
              o.record_trace ? &r_.trace : nullptr, p.stream_priority, p.num_host_streams) {
  device_.set_kernel_variants(p.kernel_variant);
  device_.set_host_rate(c.gpu.host_adam_bytes_per_s * p.host_rate_scale);
  if (o.launch == LaunchMode::Eager && c.gpu.eager_host) {
    eager_ = eager_host_charges(*c.gpu.eager_host, c.graph);
    once_charged_.assign(c.graph.ops().size(), -2);
  }
}

[[noreturn]] void Engine::bad(const std::string& what) const {
  const char* sec = phase_ == Phase::Setup ? "setup" : phase_ == Phase::Iterations ? "iteration" : "teardown";
  throw std::invalid_argument("program " + std::string(sec) + " command " + std::to_string(pc_) + ": " + what);
}

const std::vector<Command>& Engine::section() const {
  if (phase_ == Phase::Iterations)
    return iteration_ == 0 && !prog_.first_iteration.empty() ? prog_.first_iteration : prog_.iteration;
  return phase_ == Phase::Setup ? prog_.setup : prog_.teardown;
}

RunResult Engine::run() {
  const Graph& g = ctx_.graph;
  const int n = opt_.iterations;
  if (n < 0) throw std::invalid_argument("simulate: iterations must be >= 0");
  if (prog_.num_streams < 1) throw std::invalid_argument("program: num_streams must be >= 1");
  if (prog_.num_host_streams < 0 || prog_.num_host_streams >= prog_.num_streams)
    throw std::invalid_argument("program: num_host_streams must be in [0, num_streams - 1]");
  if (!(prog_.host_rate_scale > 0 && prog_.host_rate_scale < 1e6))
    throw std::invalid_argument("program: host_rate_scale must be in (0, 1e6)");
  if (!prog_.stream_priority.empty() && prog_.stream_priority.size() != static_cast<size_t>(prog_.num_streams))
    throw std::invalid_argument("program: stream_priority has " + std::to_string(prog_.stream_priority.size()) +
                                " entries for " + std::to_string(prog_.num_streams) + " streams");
  addr_.assign(g.tensors().size(), 0);
  live_.assign(g.tensors().size(), 0);
  alloc_stream_.assign(g.tensors().size(), 0);
  used_on_.assign(g.tensors().size(), {});
  multi_stream_ = prog_.num_streams > 1;
  first_marker_event_ = std::max(prog_.num_events, 0);
  marks_issued_.assign(static_cast<size_t>(prog_.num_streams), 0);
  records_issued_.assign(static_cast<size_t>(std::max(prog_.num_events, 0)), 0);
  pending_.assign(static_cast<size_t>(n) + 2, 0);
  host_done_.assign(static_cast<size_t>(n) + 2, 0);
  iter_start_.assign(static_cast<size_t>(n), 0);
  iter_end_.assign(static_cast<size_t>(n), -1);
  host_busy_.assign(static_cast<size_t>(n) + 2, 0);
  occupancy_at_start_.assign(static_cast<size_t>(n), 0);
  occupancy_at_end_.assign(static_cast<size_t>(n), 0);
  r_.allocator_ns.assign(static_cast<size_t>(n), 0);
  r_.trace.backend = "sim";
  r_.trace.device = ctx_.gpu.name;
  const uint64_t m0 = ctx_.device.malloc_calls(), f0 = ctx_.device.free_calls();

  resume_host_at(0);
  while (!q_.empty()) {
    const Event e = q_.pop();
    ++r_.events_processed;
    now_ = e.time;
    if (e.type == kHostStep) {
      host_scheduled_ = false;
      host_step();
    } else {
      device_.handle(e, now_);
    }
    settle();
  }
  if (!host_stopped_ && (phase_ != Phase::Done || !device_.idle()))
    throw std::logic_error("simulation stalled with work left (a bug in the executor)");

  r_.total_ns = now_;
  for (int i = 0; i < n && iter_end_[static_cast<size_t>(i)] >= 0; ++i) {
    const TimeNs prev = i == 0 ? iter_start_[0] : iter_end_[static_cast<size_t>(i - 1)];
    r_.iteration_ns.push_back(iter_end_[static_cast<size_t>(i)] - prev);
    const double occupied = occupancy_at_end_[static_cast<size_t>(i)] -
                            (i == 0 ? occupancy_at_start_[0] : occupancy_at_end_[static_cast<size_t>(i - 1)]);
    r_.sm_occupancy.push_back(r_.iteration_ns.back() > 0 ? occupied / static_cast<double>(r_.iteration_ns.back()) : 0);
    r_.host_busy_ns.push_back(host_busy_[tally_index(i)]);
    r_.device_busy_ns.push_back(device_.device_busy(i));
    r_.host_worker_busy_ns.push_back(device_.host_worker_busy(i));
    r_.trace.iterations.push_back({iter_start_[static_cast<size_t>(i)], iter_end_[static_cast<size_t>(i)]});
    r_.iterations_completed = i + 1;
  }
  r_.allocator_ns.resize(static_cast<size_t>(r_.iterations_completed));
  if (!r_.iteration_ns.empty()) r_.steady_iteration_ns = r_.iteration_ns.back();
  if (!r_.sm_occupancy.empty()) r_.steady_sm_occupancy = r_.sm_occupancy.back();
  if (!r_.host_busy_ns.empty()) r_.steady_host_busy_ns = r_.host_busy_ns.back();
  if (!r_.device_busy_ns.empty()) r_.steady_device_busy_ns = r_.device_busy_ns.back();
  if (!r_.host_worker_busy_ns.empty()) r_.steady_host_worker_busy_ns = r_.host_worker_busy_ns.back();
  r_.peak_reserved_bytes = ctx_.device.peak_reserved();
  r_.device_malloc_calls = ctx_.device.malloc_calls() - m0;
  r_.device_free_calls = ctx_.device.free_calls() - f0;
  return std::move(r_);
}

void Engine::resume_host_at(TimeNs t) {
  if (host_scheduled_) throw std::logic_error("host resumed twice");
  host_scheduled_ = true;
  q_.push(t, kHostStep);
}

void Engine::host_step() {
  if (in_alloc_call_) {  // the host comes back from a blocking allocator call
    const TimeNs spent = now_ - alloc_call_start_;
    if (alloc_call_iteration_ < 0) r_.setup_allocator_ns += spent;
    else if (alloc_call_iteration_ >= opt_.iterations) r_.teardown_allocator_ns += spent;
    else r_.allocator_ns[static_cast<size_t>(alloc_call_iteration_)] += spent;
    in_alloc_call_ = false;
  }
  if (has_pending_) {
    has_pending_ = false;
    enqueue(pending_stream_, pending_cmd_);
  }
  while (phase_ != Phase::Done && !host_stopped_) {
    if (pc_ >= section().size()) {
      if (opt_.sync_every_iteration && phase_ == Phase::Iterations && !device_.idle()) {
        wait_ = HostWait::DeviceIdle;  // the step's synchronise; settle() resumes the host when the device is idle
        cost_after_idle_ = 0;
        return;
      }
      end_of_section();
      continue;
    }
    if (graph_launch_due_) {  // launch: cuda-graph: the iteration's one cudaGraphLaunch
      graph_launch_due_ = false;
      if (ctx_.gpu.concurrency.graph_launch_ns > 0) {
        host_busy_[tally_index(iteration_)] += ctx_.gpu.concurrency.graph_launch_ns;
        resume_host_at(now_ + ctx_.gpu.concurrency.graph_launch_ns);
        return;
      }
    }
    const Command& c = section()[pc_];
    const bool go_on = host_issue(c);
    if (reissue_) reissue_ = false;
    else ++pc_;
    if (!go_on) return;
  }
}

void Engine::end_of_section() {
  pc_ = 0;
  host_done_[tally_index(iteration_)] = 1;
  if (phase_ == Phase::Iterations) {
    if (iteration_ == 0) {
      r_.first_iteration_peak_live_bytes = r_.peak_live_bytes;
      r_.first_iteration_peak_reserved_bytes = ctx_.device.peak_reserved();
    }
    maybe_close_iteration(iteration_);
    release_captured_frees();  // the capture ends with the host's issue of the iteration
    ctx_.pool.iteration_end(iteration_);
  }
  if (phase_ == Phase::Setup || (phase_ == Phase::Iterations && iteration_ + 1 < opt_.iterations)) {
    phase_ = Phase::Iterations;
    ++iteration_;
    if (iteration_ >= opt_.iterations) {  // zero iterations: straight to teardown
      phase_ = Phase::Teardown;
      return;
    }
    iter_start_[static_cast<size_t>(iteration_)] = now_;
    occupancy_at_start_[static_cast<size_t>(iteration_)] = device_.occupancy_integral(now_);
    graph_launch_due_ = opt_.launch == LaunchMode::CudaGraph;
    ctx_.pool.iteration_begin(iteration_);
  } else if (phase_ == Phase::Iterations) {
    phase_ = Phase::Teardown;
    iteration_ = opt_.iterations;
  } else {
    phase_ = Phase::Done;
    // Memory still held for other streams goes back to the pool: the device drains before the run ends.
    for (const HeldFree& h : held_) ctx_.pool.deallocate(h.addr);
    held_.clear();
  }
}

void Engine::enqueue(int stream, const StreamCmd& c) {
  ++pending_[tally_index(c.iteration)];
  device_.enqueue(stream, c);
}

void Engine::settle() {
  device_.settle(now_);
  if (wait_ == HostWait::None || !host_wait_over()) return;
  // After cudaFree's device synchronisation the host still pays the call itself; the other waits end at once.
  const TimeNs at = wait_ == HostWait::DeviceIdle ? add_time(now_, cost_after_idle_, ctx_.gpu.file) : now_;
  wait_ = HostWait::None;
  resume_host_at(at);
}

bool Engine::host_wait_over() const {
  switch (wait_) {
    case HostWait::None: return true;
    case HostWait::DeviceIdle: return device_.idle();
    case HostWait::Event: return device_.records_done(wait_event_) >= wait_record_;
    case HostWait::QueueRoom: return device_.queued(wait_stream_) < ctx_.gpu.concurrency.launch_queue_depth;
    case HostWait::HeldFrees:
      return std::all_of(held_.begin(), held_.end(), [&](const HeldFree& h) { return h.captured || held_free_done(h); });
  }
  return false;
}

void Engine::command_done(int iteration) {
  --pending_[tally_index(iteration)];
  if (iteration >= 0 && iteration < opt_.iterations) maybe_close_iteration(iteration);
}

void Engine::maybe_close_iteration(int i) {
  const auto k = tally_index(i);
  if (host_done_[k] && pending_[k] == 0 && iter_end_[static_cast<size_t>(i)] < 0) {
    iter_end_[static_cast<size_t>(i)] = now_;
    occupancy_at_end_[static_cast<size_t>(i)] = device_.occupancy_integral(now_);
  }
}

bool Engine::host_issue(const Command& c) {
  const Graph& g = ctx_.graph;
  if (c.stream < 0 || c.stream >= prog_.num_streams) bad("stream " + std::to_string(c.stream) + " out of range");
  StreamCmd s;
  s.kind = c.kind;
  s.iteration = iteration_;
  s.op = c.op;
  s.tensor = c.tensor;
  s.event = c.event;
  const bool is_event = c.kind == CmdKind::RecordEvent || c.kind == CmdKind::WaitEvent || c.kind == CmdKind::SyncEvent;
  if (is_event && (c.event < 0 || c.event >= static_cast<int32_t>(records_issued_.size())))
    bad("event " + std::to_string(c.event) + " out of range");
  const bool uses_tensor = c.kind == CmdKind::Alloc || c.kind == CmdKind::Free || c.kind == CmdKind::CopyIn ||
                           c.kind == CmdKind::CopyOut || c.kind == CmdKind::RecordStream;
  if (uses_tensor && (c.tensor < 0 || static_cast<size_t>(c.tensor) >= g.tensors().size()))
    bad("tensor " + std::to_string(c.tensor) + " out of range");

  const bool host_stream = prog_.host_stream(c.stream);
  const bool device_work = c.kind == CmdKind::Launch || c.kind == CmdKind::CopyIn || c.kind == CmdKind::CopyOut ||
                           c.kind == CmdKind::Alloc || c.kind == CmdKind::Free || c.kind == CmdKind::RecordStream;
  if (host_stream && device_work) bad(std::string(to_string(c.kind)) + " on host stream " + std::to_string(c.stream));
  switch (c.kind) {
    case CmdKind::HostCompute:
      if (!host_stream) bad("host_compute on stream " + std::to_string(c.stream) + ", which is not a host stream");
      if (c.op < 0 || static_cast<size_t>(c.op) >= g.ops().size()) bad("op " + std::to_string(c.op) + " out of range");
      if (!(ctx_.gpu.host_adam_bytes_per_s > 0))
        bad("host_compute of op '" + g.op(c.op).name + "', but the hardware file gives no host_cpu.adam_gb_per_s");
      enqueue(c.stream, s);  // handed to the CPU worker: the issuing thread pays nothing
      return true;
    case CmdKind::Launch: {
      if (c.op < 0 || static_cast<size_t>(c.op) >= g.ops().size()) bad("op " + std::to_string(c.op) + " out of range");
      const Op& op = g.op(c.op);
      auto check = [&](TensorId t) {
        if (t != kNoTensor && !live_[static_cast<size_t>(t)])
          bad("launch of op '" + op.name + "' uses tensor '" + g.tensor(t).name + "', which is not allocated");
      };
      for (TensorId t : c.replay ? g.replay_inputs(op) : op.inputs) check(t);
      for (TensorId t : op.outputs) check(t);
      if (op.workspace != kNoTensor && alloc_bytes(prog_, g, op.workspace) > 0) check(op.workspace);  // 0 B: never allocated
      break;
    }
    case CmdKind::CopyIn:
    case CmdKind::CopyOut:
      if (!live_[static_cast<size_t>(c.tensor)])
        bad(std::string(to_string(c.kind)) + " of tensor '" + g.tensor(c.tensor).name + "', which is not allocated");
      break;
    case CmdKind::RecordEvent:
      s.record = ++records_issued_[static_cast<size_t>(c.event)];
      enqueue(c.stream, s);
      return true;
    case CmdKind::WaitEvent:
      s.record = records_issued_[static_cast<size_t>(c.event)];
      if (s.record != 0) enqueue(c.stream, s);  // never recorded: CUDA treats the wait as done
      return true;
    case CmdKind::SyncEvent: {
      const auto e = static_cast<size_t>(c.event);
      if (device_.records_done(c.event) >= records_issued_[e]) return true;
      wait_ = HostWait::Event;
      wait_event_ = c.event;
      wait_record_ = records_issued_[e];
      return false;
    }
    case CmdKind::Alloc: return do_alloc(c);
    case CmdKind::Free: return do_free(c);
    case CmdKind::RecordStream: return do_record_stream(c);
  }
  // a kernel launch or an async copy: the host pays the call, then the command joins its stream; eagerly, a
  // stream whose launch queue is full makes the call block until the stream's oldest command is done
  const int depth = ctx_.gpu.concurrency.launch_queue_depth;
  if (opt_.launch == LaunchMode::Eager && depth > 0 && device_.queued(c.stream) >= depth) {
    wait_ = HostWait::QueueRoom;
    wait_stream_ = c.stream;
    reissue_ = true;
    return false;
  }
  const TimeNs overhead = launch_cost(c);
  if (opt_.record_trace && c.kind == CmdKind::Launch)
    r_.trace.host_ops.push_back({iteration_, c.op, c.stream, now_, add_time(now_, overhead, ctx_.gpu.file)});
  if (overhead <= 0) {
    enqueue(c.stream, s);
    return true;
  }
  has_pending_ = true;
  pending_stream_ = c.stream;
  pending_cmd_ = s;
  resume_host_at(add_time(now_, overhead, ctx_.gpu.file));
  return false;
}

TimeNs Engine::launch_cost(const Command& c) {
  TimeNs cost = ctx_.gpu.launch_overhead_ns;
  if (opt_.launch == LaunchMode::CudaGraph) {
    cost = ctx_.gpu.concurrency.graph_node_ns;
  } else if (c.kind == CmdKind::Launch && !eager_.issue_ns.empty()) {  // PyTorch's eager host, op by op
    const auto op = static_cast<size_t>(c.op);
    cost = eager_.issue_ns[op];
    if (once_charged_[op] != iteration_) {
      cost += eager_.once_ns[op];
      once_charged_[op] = iteration_;
    }
  }
  host_busy_[tally_index(iteration_)] += cost;
  return cost;
}

bool Engine::do_alloc(const Command& c) {
  const Tensor& t = ctx_.graph.tensor(c.tensor);
  const uint64_t bytes = alloc_bytes(prog_, ctx_.graph, c.tensor);
  const auto ti = static_cast<size_t>(c.tensor);
  if (live_[ti]) bad("alloc of tensor '" + t.name + "', which is already allocated");
  DeviceMemory& d = ctx_.device;
  const DeviceCallCounts before = DeviceCallCounts::read(d);
  release_done_frees();
  const std::optional<DevPtr> p = ctx_.pool.allocate(AllocRequest{bytes, c.stream});
  if (!p && waitable_frees_held()) {
    // PyTorch, before it gives up, synchronizes on the events of every held block (release_cached_blocks ->
    // synchronize_and_free_events) and tries again: the host waits for the streams, then reissues the Alloc.
    // A captured hold's events are not there to wait on: it does not come back before the iteration ends.
    wait_ = HostWait::HeldFrees;
    reissue_ = true;
    in_alloc_call_ = true;
    alloc_call_start_ = now_;
    alloc_call_iteration_ = iteration_;
    return false;
  }
  if (!p) {
    host_stopped_ = true;
    r_.trace.oom = true;
    const std::string where = iteration_ < 0 ? std::string("setup") : "iteration " + std::to_string(iteration_);
    r_.trace.oom_where = where + ", alloc of tensor '" + t.name + "' (" + std::to_string(bytes) +
                         " bytes) on stream " + std::to_string(c.stream);
    return false;
  }
  if (multi_stream_) order_after_freed(*p, bytes, c.stream);
  live_[ti] = 1;
  addr_[ti] = *p;
  alloc_stream_[ti] = c.stream;
  used_on_[ti].clear();
  live_bytes_ += bytes;
  r_.peak_live_bytes = std::max(r_.peak_live_bytes, live_bytes_);
  if (opt_.record_trace)
    r_.trace.mem.push_back({iteration_, now_, MemAction::Alloc, c.tensor, *p, bytes, d.reserved()});
  return charge_device_calls(before);
}

bool Engine::do_free(const Command& c) {
  const Tensor& t = ctx_.graph.tensor(c.tensor);
  const uint64_t bytes = alloc_bytes(prog_, ctx_.graph, c.tensor);
  const auto ti = static_cast<size_t>(c.tensor);
  if (!live_[ti]) bad("free of tensor '" + t.name + "', which is not allocated");
  DeviceMemory& d = ctx_.device;
  const DeviceCallCounts before = DeviceCallCounts::read(d);
  // The tensor is dead for the program now (PyTorch's memory_allocated drops at free); its memory may be held.
  live_[ti] = 0;
  live_bytes_ -= bytes;
  if (opt_.record_trace)
    r_.trace.mem.push_back({iteration_, now_, MemAction::Free, c.tensor, addr_[ti], bytes, d.reserved()});
  if (!multi_stream_) {
    ctx_.pool.deallocate(addr_[ti]);
    return charge_device_calls(before);
  }
  FreeMarks marks{mark(alloc_stream_[ti])};
  for (int16_t u : used_on_[ti]) marks.push_back(mark(u));
  used_on_[ti].clear();
  if (marks.size() > 1 && ctx_.pool.holds_frees_for_other_streams()) {  // back once those streams are past it
    const bool captured = opt_.launch == LaunchMode::CudaGraph && phase_ == Phase::Iterations;
    held_.push_back(HeldFree{addr_[ti], bytes, std::move(marks), captured});
    return true;
  }
  give_back(addr_[ti], bytes, std::move(marks));
  return charge_device_calls(before);
}

bool Engine::do_record_stream(const Command& c) {
  const auto ti = static_cast<size_t>(c.tensor);
  if (!live_[ti]) bad("record_stream of tensor '" + ctx_.graph.tensor(c.tensor).name + "', which is not allocated");
  auto& on = used_on_[ti];
  // The allocation stream needs no event (frees are ordered on it), and a stream is named once (a set in PyTorch).
  if (c.stream != alloc_stream_[ti] && std::find(on.begin(), on.end(), c.stream) == on.end()) on.push_back(c.stream);
  return true;
}

StreamMark Engine::mark(int stream) {
  StreamCmd s;
  s.kind = CmdKind::RecordEvent;
  s.iteration = iteration_;
  s.event = first_marker_event_ + stream;
  s.record = ++marks_issued_[static_cast<size_t>(stream)];
  enqueue(stream, s);
  return {stream, s.record};
}

bool Engine::mark_done(const StreamMark& m) const {
  return device_.records_done(first_marker_event_ + m.stream) >= m.record;
}

bool Engine::held_free_done(const HeldFree& h) const {
  return std::all_of(h.marks.begin() + 1, h.marks.end(), [&](const StreamMark& m) { return mark_done(m); });
}

bool Engine::waitable_frees_held() const {
  return std::any_of(held_.begin(), held_.end(), [](const HeldFree& h) { return !h.captured; });
}

// PyTorch's process_events, at the start of every allocation: held memory whose streams are past it returns to
// the pool (in free order). A captured hold waits for its iteration's end.
void Engine::release_done_frees() {
  size_t kept = 0;
  for (size_t i = 0; i < held_.size(); ++i) {
    if (!held_[i].captured && held_free_done(held_[i]))
      give_back(held_[i].addr, held_[i].bytes, std::move(held_[i].marks));
    else if (kept++ != i) held_[kept - 1] = std::move(held_[i]);  // never onto itself: that empties the waits
  }
  held_.resize(kept);
}

// The end of a captured iteration (the host has issued all of it): its holds return to the pool without a wait, as
// dlsim-cuda ends them at cudaStreamEndCapture. Their marks stay with the memory, so a later owner on another
// stream still waits for the streams that used it (order_after_freed): the device may not be past them yet.
void Engine::release_captured_frees() {
  size_t kept = 0;
  for (size_t i = 0; i < held_.size(); ++i) {
    if (held_[i].captured) give_back(held_[i].addr, held_[i].bytes, std::move(held_[i].marks));
    else if (kept++ != i) held_[kept - 1] = std::move(held_[i]);  // never onto itself: that empties the waits
  }
  held_.resize(kept);
}

void Engine::give_back(DevPtr addr, uint64_t bytes, FreeMarks marks) {
  ctx_.pool.deallocate(addr);
  freed_.add(addr, bytes, std::move(marks));
}

// Memory whose last owner was used on other streams than `stream` (a stream-blind pool moving it across
// streams, or a planned slot reused while its readers on other streams may still run): `stream` waits until
// each of them has passed the old owner's Free (the event a framework records there), unless it already has.
void Engine::order_after_freed(DevPtr addr, uint64_t bytes, int stream) {
  std::vector<uint64_t>& wait_for = wait_for_;  // per stream, the latest mark to wait for (0: none)
  wait_for.assign(static_cast<size_t>(prog_.num_streams), 0);
  freed_.take(addr, bytes, [&](const FreeMarks& marks) {
    for (const StreamMark& m : marks) {
      if (m.stream == stream || mark_done(m)) continue;
      uint64_t& w = wait_for[static_cast<size_t>(m.stream)];
      w = std::max(w, m.record);
    }
  });
  for (size_t u = 0; u < wait_for.size(); ++u) {
    if (wait_for[u] == 0) continue;
    StreamCmd s;
    s.kind = CmdKind::WaitEvent;
    s.iteration = iteration_;
    s.event = first_marker_event_ + static_cast<int32_t>(u);
    s.record = wait_for[u];
    enqueue(stream, s);
  }
}

// Charges the host for the device calls the pool made since `before`. A cudaMalloc, and a page mapped for an
// expandable segment (cuMemCreate + cuMemMap), block the host for base + per-GiB; a cudaFree, and a page unmapped
// (PyTorch synchronizes the segment's stream before cuMemUnmap), first wait for the device to be idle, then cost
// base + per-GiB of cudaFree. Returns true when the call cost nothing (the host goes on at once).
bool Engine::charge_device_calls(const DeviceCallCounts& before) {
  const DeviceCallCounts now = DeviceCallCounts::read(ctx_.device);
  const GpuSpec& gpu = ctx_.gpu;
  const uint64_t mallocs = (now.mallocs - before.mallocs) + (now.maps - before.maps);
  const uint64_t frees = (now.frees - before.frees) + (now.unmaps - before.unmaps);
  if (mallocs == 0 && frees == 0) return true;
  const double bytes_in = static_cast<double>((now.bytes_malloced - before.bytes_malloced) + (now.bytes_mapped - before.bytes_mapped));
  const double bytes_out = static_cast<double>((now.bytes_freed - before.bytes_freed) + (now.bytes_unmapped - before.bytes_unmapped));
  const double malloc_cost = static_cast<double>(mallocs) * static_cast<double>(gpu.malloc_base_ns) +
                             gpu.malloc_ns_per_gib * bytes_in / static_cast<double>(kGiB);
  const double free_cost = static_cast<double>(frees) * static_cast<double>(gpu.free_base_ns) +
                           gpu.free_ns_per_gib * bytes_out / static_cast<double>(kGiB);
  const TimeNs cost = checked_duration_ns(malloc_cost + free_cost, gpu.file, mallocs > 0 ? "cudamalloc" : "cudafree",
                                          "an allocator call's cudaMalloc/cudaFree");
  in_alloc_call_ = true;
  alloc_call_start_ = now_;
  alloc_call_iteration_ = iteration_;
  host_busy_[tally_index(iteration_)] += cost;  // the call itself; cudaFree's wait for the device is not host work
  if (frees > 0 && !device_.idle()) {  // cudaFree synchronizes the device first
    wait_ = HostWait::DeviceIdle;
    cost_after_idle_ = cost;
    return false;
  }
  resume_host_at(add_time(now_, cost, ctx_.gpu.file));
  return false;
}

}  // namespace sim_internal

const char* to_string(LaunchMode m) { return m == LaunchMode::CudaGraph ? "cuda-graph" : "eager"; }

RunResult simulate(const Program& program, const SimContext& ctx, const SimOptions& options) {
  sim_internal::Engine e(program, ctx, options);
  return e.run();
}

}  // namespace dlsim
