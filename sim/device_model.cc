#include "sim/device_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/sim_time.h"
#include "policies/swap/core/host_step.h"

namespace dlsim {

namespace {
// Progress (standalone ns) within which a wave counts as ended: event times are whole nanoseconds, so a
// completion is scheduled at the first whole ns at or after v_end minus this much, and a wave whose v_end is
// that close is retired there. It keeps a kernel alone on the GPU ending exactly its standalone time after it
// started, however many waves it has.
constexpr double kProgressSlack = 1e-3;
// Free slot share within which one more block still fits (the shares are sums of 1 / (SMs x k)).
constexpr double kShareSlack = 1e-9;
}  // namespace

DeviceModel::DeviceModel(const Graph& graph, const GpuSpec& gpu, const KernelCostModel& kernels,
                         const TransferModel& link, int num_streams, int num_events, EventQueue& queue,
                         DeviceListener& listener, Trace* trace, const std::vector<int>& priorities,
                         int num_host_streams)
    : graph_(graph),
      gpu_(gpu),
      kernels_(kernels),
      link_(link),
      gpu_file_(gpu.file),
      queue_(queue),
      listener_(listener),
      trace_(trace),
      host_rate_(gpu.host_adam_bytes_per_s),
      serial_copies_(gpu.copy_engines < 2) {
  // Negative counts are the executor's to report (it checks the Program before running it).
  const size_t streams = static_cast<size_t>(std::max(num_streams, 0));
  const int connections = std::max(gpu.concurrency.max_connections, 1);
  stream_connection_.resize(streams);
  stream_priority_.assign(streams, 0);
  // Host streams (the last ones) are CPU workers: a queue each, after the GPU's connections.
  const size_t host = std::min(streams, static_cast<size_t>(std::max(num_host_streams, 0)));
  const size_t gpu_streams = streams - host;
  const size_t gpu_queues = std::min(gpu_streams, static_cast<size_t>(connections));
  for (size_t s = 0; s < streams; ++s) {
    stream_connection_[s] = s < gpu_streams ? static_cast<int>(s % static_cast<size_t>(connections))
                                            : static_cast<int>(gpu_queues + (s - gpu_streams));
    if (s < priorities.size()) stream_priority_[s] = priorities[s];
  }
  connections_.resize(gpu_queues + host);
  records_done_.assign(static_cast<size_t>(std::max(num_events, 0)), 0);
  queued_.assign(static_cast<size_t>(std::max(num_streams, 1)), 0);
  costs_.assign(graph.ops().size(), KernelCost{});
  cost_known_.assign(graph.ops().size(), 0);
}

void DeviceModel::enqueue(int stream, const StreamCmd& c) {
  connections_[static_cast<size_t>(stream_connection_[static_cast<size_t>(stream)])].fifo.push_back({stream, c});
  ++pending_;
  ++queued_[static_cast<size_t>(stream)];
}

void DeviceModel::settle(TimeNs now) {
  now_ = now;
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t c = 0; c < connections_.size(); ++c) progress |= advance_connection(static_cast<int>(c));
  }
}

void DeviceModel::handle(const Event& e, TimeNs now) {
  now_ = now;
  Activity& a = acts_[e.payload];
  if (!a.in_use || a.generation != e.generation) return;  // stale: its rate changed, or it finished
  if (e.type == kLatencyDone) join_group(e.payload);
  else if (a.kernel) kernel_event(e.payload);
  else finish_activity(e.payload);
}

bool DeviceModel::advance_connection(int ci) {
  Connection& conn = connections_[static_cast<size_t>(ci)];
  bool recorded = false;
  while (!conn.busy && !conn.fifo.empty()) {
    const Queued q = conn.fifo.front();
    const StreamCmd& c = q.cmd;
    if (c.kind == CmdKind::RecordEvent) {
      auto& done = records_done_[static_cast<size_t>(c.event)];
      done = std::max(done, c.record);  // records of one event complete in order when on one stream
      recorded = true;
    } else if (c.kind == CmdKind::WaitEvent) {
      // The record waited for was issued before this wait, so it is ahead of it in its own queue: no deadlock.
      if (records_done_[static_cast<size_t>(c.event)] < c.record) return recorded;
    } else {
      conn.busy = true;
      start_activity(q.stream, c);
      return recorded;
    }
    conn.fifo.pop_front();
    command_done(q.stream, c.iteration);
  }
  return recorded;
}

const KernelCost& DeviceModel::kernel_cost(OpId op) {
  const auto i = static_cast<size_t>(op);
  if (!cost_known_[i]) {
    const uint8_t v = variants_.empty() ? 0 : variants_[i];
    if (v == 0) {
      costs_[i] = kernels_.cost(graph_, graph_.op(op));
    } else {
      const std::vector<KernelVariant> all = kernels_.variants(graph_, graph_.op(op));
      if (v >= all.size())
        throw std::invalid_argument("op '" + graph_.op(op).name + "' runs kernel variant " + std::to_string(v) +
                                    ", the cost model has " + std::to_string(all.size()));
      costs_[i] = all[v].cost;
    }
    const KernelCost& k = costs_[i];
    if (!(k.sm_fraction > 0 && k.sm_fraction <= 1) || k.duration_ns < 0 || k.blocks < 0 || k.blocks_per_sm < 1)
      throw std::logic_error("kernel cost model gave op '" + graph_.op(op).name +
                             "' a duration < 0, an sm_fraction outside (0, 1], blocks < 0 or blocks_per_sm < 1");
    cost_known_[i] = 1;
  }
  return costs_[i];
}

void DeviceModel::start_activity(int s, const StreamCmd& c) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(acts_.size());
    acts_.emplace_back();
  }
  Activity& a = acts_[slot];
  a.in_use = true;
  a.stream = s;
  a.cmd = c;
  a.start = now_;
  a.last = now_;
  a.rate = 0;
  ++a.generation;
  if (c.kind == CmdKind::Launch) {
    a.host = false;
    set_busy(c.iteration, +1);
    start_kernel(slot);
    return;
  }
  a.kernel = false;
  a.host = c.kind == CmdKind::HostCompute;
  if (a.host) {  // a CPU worker's step: a fixed time, nothing of the GPU
    const TimeNs t = host_step_ns(graph_, graph_.op(c.op), host_rate_);
    queue_.push(add_time(now_, t, gpu_file_), kActivityDone, slot, a.generation);
    return;
  }
  set_busy(c.iteration, +1);  // a copy, its latency included
  a.to_host = c.kind == CmdKind::CopyOut;
  const CopyDir dir = a.to_host ? CopyDir::DeviceToHost : CopyDir::HostToDevice;
  a.group = serial_copies_ ? kCopyH2D : (a.to_host ? kCopyD2H : kCopyH2D);
  const uint64_t bytes = graph_.tensor(c.tensor).bytes;
  const TimeNs latency = link_.latency(dir);
  const TimeNs total = link_.copy_time(dir, bytes, /*pinned=*/true);
  a.remaining = static_cast<double>(std::max<TimeNs>(0, total - latency));
  if (latency > 0) {
    queue_.push(add_time(now_, latency, gpu_file_), kLatencyDone, slot, a.generation);
  } else {
    join_group(slot);
  }
}

// A kernel reaches the block scheduler: its grid, its wave length, its bandwidth demand. One that does no work
// (a view, 0 ns) takes no slots and ends at once.
void DeviceModel::start_kernel(uint32_t slot) {
  Activity& a = acts_[slot];
  const KernelCost& k = kernel_cost(a.cmd.op);
  const int sms = std::max(gpu_.sms, 1);
  a.kernel = true;
  a.priority = stream_priority_[static_cast<size_t>(a.stream)];
  a.arrival = arrivals_++;
  a.v = 0;
  a.waves.clear();
  a.last_wave_time = -1;
  a.event_v = -1;
  a.resident = 0;
  a.start = -1;  // the trace's start: when its first block runs
  if (k.duration_ns == 0) {
    a.start = now_;
    a.blocks_left = 0;
    a.rate = 1;
    queue_.push(now_, kActivityDone, slot, a.generation);
    return;
  }
  const int per_sm = k.blocks > 0 ? k.blocks_per_sm : 1;
  const int64_t blocks =
      k.blocks > 0 ? k.blocks : std::max<int64_t>(1, std::llround(k.sm_fraction * static_cast<double>(sms)));
  const int64_t slots = static_cast<int64_t>(sms) * per_sm;
  const int64_t waves = (blocks + slots - 1) / slots;
  a.blocks_left = blocks;
  a.full_resident = std::min(blocks, slots);
  a.block_share = 1.0 / static_cast<double>(slots);
  a.wave_ns = static_cast<double>(k.duration_ns) / static_cast<double>(waves);
  const Op& op = graph_.op(a.cmd.op);
  const double bytes = static_cast<double>(op.bytes_read) + static_cast<double>(op.bytes_written);
  a.bandwidth = bytes * 1e9 / static_cast<double>(k.duration_ns);
  const double shared = gpu_.hbm_bandwidth * gpu_.concurrency.hbm_share_fraction;
  a.memory_bound = shared > 0 ? std::min(1.0, a.bandwidth / shared) : 0.0;
  // Dispatch order: stream priority (lower first), then arrival.
  auto pos = std::upper_bound(resident_kernels_.begin(), resident_kernels_.end(), slot, [&](uint32_t x, uint32_t y) {
    const Activity& p = acts_[x];
    const Activity& q = acts_[y];
    return p.priority != q.priority ? p.priority < q.priority : p.arrival < q.arrival;
  });
  resident_kernels_.insert(pos, slot);
  schedule_kernels();
}

// A kernel's next wave ended (or a 0 ns kernel is done): retire the waves that ended, finish the kernel when
// nothing of it is left, and hand the freed slots out again.
void DeviceModel::kernel_event(uint32_t slot) {
  Activity& a = acts_[slot];
  if (a.blocks_left == 0 && a.resident == 0) {  // a 0 ns kernel
    finish_activity(slot);
    return;
  }
  a.v += a.rate * static_cast<double>(now_ - a.last);
  a.last = now_;
  a.event_v = -1;
  for (size_t i = 0; i < a.waves.size();) {
    if (a.waves[i].v_end <= a.v + kProgressSlack) {
      a.resident -= a.waves[i].blocks;
      a.last_wave_end = a.waves[i].v_end;
      a.last_wave_time = now_;
      a.waves[i] = a.waves.back();
      a.waves.pop_back();
    } else {
      ++i;
    }
  }
  if (a.blocks_left == 0 && a.resident == 0) {
    resident_kernels_.erase(std::find(resident_kernels_.begin(), resident_kernels_.end(), slot));
    finish_activity(slot);  // schedules the remaining kernels
    return;
  }
  schedule_kernels();
}

void DeviceModel::schedule_kernels() {
  const ConcurrencySpec& cs = gpu_.concurrency;
  // Progress up to now, and the slots the resident blocks hold.
  double used = 0;
  for (uint32_t slot : resident_kernels_) {
    Activity& a = acts_[slot];
    a.v += a.rate * static_cast<double>(now_ - a.last);
    a.last = now_;
    used += static_cast<double>(a.resident) * a.block_share;
  }
  // Kernels waiting for slots: a run of several waves as one entry is cut back to the wave in progress, so that
  // the slots are handed out again at its end.
  int waiting = 0;
  for (uint32_t slot : resident_kernels_) waiting += acts_[slot].blocks_left > 0 ? 1 : 0;
  for (uint32_t slot : resident_kernels_) {
    Activity& a = acts_[slot];
    const bool was_waiting = a.blocks_left > 0;
    if (waiting - (was_waiting ? 1 : 0) == 0) continue;  // nobody else waits
    for (Wave& w : a.waves) {
      if (w.count == 1) continue;
      const double done = std::floor((a.v - w.v_start + kProgressSlack) / a.wave_ns);
      const int64_t current = std::clamp<int64_t>(static_cast<int64_t>(done), 0, w.count - 1);
      if (current == w.count - 1) continue;  // its last wave runs already
      a.blocks_left += (w.count - 1 - current) * w.blocks;
      w.v_end = w.v_start + static_cast<double>(current + 1) * a.wave_ns;
      w.count = current + 1;
    }
    if (!was_waiting && a.blocks_left > 0) ++waiting;
  }
  // Block dispatch in order: each kernel takes what the free slots hold of its remaining blocks; alone on an
  // idle GPU, all of its full waves at once. A wave that follows one of the same kernel ending at
  // this instant starts where that one ended (not where the rounding of event times put the kernel's
  // progress), so waves back to back add up to the standalone time exactly.
  double free = std::max(0.0, 1.0 - used);
  for (uint32_t slot : resident_kernels_) {
    Activity& a = acts_[slot];
    if (a.blocks_left == 0) continue;
    const auto fit = static_cast<int64_t>(std::floor((free + kShareSlack) / a.block_share));
    const int64_t n = std::min(a.blocks_left, fit);
    if (n <= 0) continue;
    // Several waves at once only with the whole GPU to itself and nobody else waiting: then nothing can change
    // the width of its waves until a kernel arrives (which cuts the run back, above).
    const bool alone = waiting == 1 && static_cast<double>(n) * a.block_share >= 1.0 - kShareSlack;
    const int64_t count = alone ? a.blocks_left / n : 1;
    const double from = a.last_wave_time == now_ ? std::min(a.v, a.last_wave_end) : a.v;
    a.waves.push_back({from, from + static_cast<double>(count) * a.wave_ns, n, count});
    if (a.start < 0) a.start = now_;
    a.blocks_left -= n * count;
    a.resident += n;
    free -= static_cast<double>(n) * a.block_share;
    if (a.blocks_left == 0) --waiting;
  }
  // Rates: HBM bandwidth shared in proportion to resident blocks, and the general co-run slowdown.
  double demand = 0, largest = 0;
  int running = 0;
  for (uint32_t slot : resident_kernels_) {
    const Activity& a = acts_[slot];
    if (a.resident == 0) continue;
    ++running;
    const double d = a.bandwidth * static_cast<double>(a.resident) / static_cast<double>(a.full_resident);
    demand += d;
    largest = std::max(largest, d);
  }
  const double shared = std::max(gpu_.hbm_bandwidth * cs.hbm_share_fraction, largest);
  const double oversubscribed = shared > 0 ? std::max(1.0, demand / shared) : 1.0;
  // Copies moving data slow every kernel alike (GpuSpec's concurrency.copy_slowdown), per direction busy.
  const double copying = 1.0 + cs.copy_slowdown * static_cast<double>(copy_directions_busy());
  double occupancy = 0;
  for (uint32_t slot : resident_kernels_) {
    Activity& a = acts_[slot];
    occupancy += static_cast<double>(a.resident) * a.block_share;
    if (a.resident == 0) {  // waiting for slots: no progress, no event
      if (a.event_v >= 0) ++a.generation;
      a.event_v = -1;
      a.rate = 0;
      continue;
    }
    // Each other resident kernel slows this one by co_run_slowdown, in full when it holds at least as much of
    // the GPU, in proportion when less (a few blocks beside a full wave hardly disturb it).
    double others = 0;
    if (running > 1 && cs.co_run_slowdown > 0)
      for (uint32_t other : resident_kernels_)
        if (other != slot && acts_[other].resident > 0)
          others += std::min(1.0, static_cast<double>(acts_[other].resident) * acts_[other].block_share /
                                      (static_cast<double>(a.resident) * a.block_share));
    const double co_run = 1.0 + cs.co_run_slowdown * others;
    const double rate = 1.0 / ((1.0 + a.memory_bound * (oversubscribed - 1.0)) * co_run * copying);
    double next = a.waves.front().v_end;
    for (const Wave& w : a.waves) next = std::min(next, w.v_end);
    if (rate == a.rate && next == a.event_v) continue;  // its pending event still holds
    a.rate = rate;
    a.event_v = next;
    ++a.generation;
    // Clamped before the conversion, so that a time past the clock's bound is add_time's error, not a wrap.
    const double ns = std::min(std::max(0.0, std::ceil((next - kProgressSlack - a.v) / rate)),
                               static_cast<double>(kMaxSimTimeNs) + 1.0);
    queue_.push(add_time(now_, static_cast<TimeNs>(ns), gpu_file_), kActivityDone, slot, a.generation);
  }
  set_occupancy(std::min(occupancy, 1.0));
}

void DeviceModel::set_occupancy(double occupancy) {
  if (occupancy == occupancy_) return;
  occupancy_integral_ += occupancy_ * static_cast<double>(now_ - occupancy_since_);
  occupancy_since_ = now_;
  occupancy_ = occupancy;
  if (trace_) {
    if (!trace_->sm_occupancy.empty() && trace_->sm_occupancy.back().time == now_) {
      trace_->sm_occupancy.back().value = occupancy;
    } else {
      trace_->sm_occupancy.push_back({now_, occupancy});
    }
  }
}

DeviceModel::IterationBusy& DeviceModel::busy_of(int iteration) {
  const auto i = static_cast<size_t>(std::max(iteration + 1, 0));
  if (i >= busy_.size()) busy_.resize(i + 1);
  return busy_[i];
}

void DeviceModel::set_busy(int iteration, int64_t delta) {
  IterationBusy& b = busy_of(iteration);
  if (b.active == 0 && delta > 0) b.since = now_;
  b.active += delta;
  if (b.active == 0) b.device += now_ - b.since;
}

TimeNs DeviceModel::device_busy(int iteration) const {
  const auto i = static_cast<size_t>(std::max(iteration + 1, 0));
  return i < busy_.size() ? busy_[i].device : 0;
}

TimeNs DeviceModel::host_worker_busy(int iteration) const {
  const auto i = static_cast<size_t>(std::max(iteration + 1, 0));
  return i < busy_.size() ? busy_[i].host_worker : 0;
}

void DeviceModel::join_group(uint32_t slot) {
  Activity& a = acts_[slot];
  a.last = now_;
  a.rate = 0;  // forces a completion event at the re-solve
  const int busy_before = copy_directions_busy();
  members_[a.group].push_back(slot);
  resolve_group(a.group);
  copies_changed(busy_before);
}

int DeviceModel::copy_directions_busy() const {
  int busy = 0;
  for (const std::vector<uint32_t>& m : members_) busy += m.empty() ? 0 : 1;
  return busy;
}

// The kernels' rates depend on how many copy directions move data (copy_slowdown): solve them again when that
// changed. Without a copy slowdown nothing is re-solved, so a file without one runs exactly as before.
void DeviceModel::copies_changed(int busy_before) {
  if (gpu_.concurrency.copy_slowdown > 0 && copy_directions_busy() != busy_before) schedule_kernels();
}

// Brings every copy's remaining work up to date, solves the rates, and re-keys the completion of each copy
// whose rate changed (the old event goes stale through the generation counter).
void DeviceModel::resolve_group(int g) {
  std::vector<uint32_t>& m = members_[g];
  for (uint32_t slot : m) {
    Activity& a = acts_[slot];
    a.remaining = std::max(0.0, a.remaining - a.rate * static_cast<double>(now_ - a.last));
    a.last = now_;
  }
  for (size_t i = 0; i < m.size(); ++i) {
    Activity& a = acts_[m[i]];
    double rate;
    if (serial_copies_) rate = i == 0 ? 1.0 : 0.0;  // one engine: the copy that reached it first
    else rate = 1.0 / static_cast<double>(m.size());  // equal bandwidth shares
    if (rate == a.rate) continue;
    a.rate = rate;
    ++a.generation;
    if (a.rate > 0) {
      // Clamped before the conversion, so that a time past the clock's bound is add_time's error, not a wrap.
      const double left = std::min(std::ceil(a.remaining / a.rate), static_cast<double>(kMaxSimTimeNs) + 1.0);
      queue_.push(add_time(now_, static_cast<TimeNs>(left), gpu_file_), kActivityDone, m[i], a.generation);
    }
  }
}

void DeviceModel::finish_activity(uint32_t slot) {
  Activity& a = acts_[slot];
  a.in_use = false;
  ++a.generation;
  free_slots_.push_back(slot);
  const StreamCmd c = a.cmd;
  if (a.host) busy_of(c.iteration).host_worker += now_ - a.start;
  else set_busy(c.iteration, -1);
  if (trace_) {
    if (a.kernel || a.host) {
      trace_->ops.push_back({c.iteration, c.op, a.stream, a.start, now_});
    } else {
      trace_->copies.push_back({c.iteration, c.tensor, a.to_host, graph_.tensor(c.tensor).bytes, a.start, now_, a.stream});
    }
  }
  if (a.kernel) {
    schedule_kernels();
  } else if (!a.host) {
    const int busy_before = copy_directions_busy();
    std::vector<uint32_t>& m = members_[a.group];
    m.erase(std::find(m.begin(), m.end(), slot));
    resolve_group(a.group);
    copies_changed(busy_before);
  }
  Connection& conn = connections_[static_cast<size_t>(stream_connection_[static_cast<size_t>(a.stream)])];
  conn.busy = false;
  conn.fifo.pop_front();
  command_done(a.stream, c.iteration);
}

void DeviceModel::command_done(int stream, int iteration) {
  --pending_;
  --queued_[static_cast<size_t>(stream)];
  listener_.command_done(iteration);
}

}  // namespace dlsim
