// The device side of the executor: stream FIFOs, event records and waits, and the fluid sharing of the SMs
// and the copy engines by the kernels and copies in flight.
#include <algorithm>
#include <cmath>

#include "sim/engine.h"
#include "sim/fluid_share.h"

namespace dlsim::sim_engine {

// Runs every stream as far as it can go at `now_`, then wakes the host if what it waits for has happened.
void Engine::settle() {
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t s = 0; s < streams_.size(); ++s) progress |= advance_stream(static_cast<int>(s));
  }
  if (wait_ == HostWait::DeviceIdle && device_idle()) {
    wait_ = HostWait::None;
    resume_host_at(now_ + cost_after_idle_);
  } else if (wait_ == HostWait::Event && records_done_[static_cast<size_t>(wait_event_)] >= wait_record_) {
    wait_ = HostWait::None;
    resume_host_at(now_);
  }
}

// Returns true when it completed an event record (other streams may now go on).
bool Engine::advance_stream(int s) {
  Stream& st = streams_[static_cast<size_t>(s)];
  bool recorded = false;
  while (!st.busy && !st.fifo.empty()) {
    const StreamCmd c = st.fifo.front();
    if (c.kind == CmdKind::RecordEvent) {
      auto& done = records_done_[static_cast<size_t>(c.event)];
      done = std::max(done, c.record);  // records of one event complete in order when on one stream
      recorded = true;
    } else if (c.kind == CmdKind::WaitEvent) {
      if (records_done_[static_cast<size_t>(c.event)] < c.record) return recorded;
    } else {
      st.busy = true;
      start_activity(s, c);
      return recorded;
    }
    st.fifo.pop_front();
    command_done(c.iteration);
  }
  return recorded;
}

void Engine::start_activity(int s, const StreamCmd& c) {
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
    const KernelCost& k = kernel_cost(c.op);
    a.kernel = true;
    a.group = kKernels;
    a.demand = k.sm_fraction;
    a.remaining = static_cast<double>(k.duration_ns);
    join_group(slot);
    return;
  }
  a.kernel = false;
  a.to_host = c.kind == CmdKind::CopyOut;
  const CopyDir dir = a.to_host ? CopyDir::DeviceToHost : CopyDir::HostToDevice;
  a.group = serial_copies_ ? kCopyH2D : (a.to_host ? kCopyD2H : kCopyH2D);
  const uint64_t bytes = ctx_.graph.tensor(c.tensor).bytes;
  const TimeNs latency = ctx_.link.latency(dir);
  const TimeNs total = ctx_.link.copy_time(dir, bytes, /*pinned=*/true);
  a.remaining = static_cast<double>(std::max<TimeNs>(0, total - latency));
  if (latency > 0) {
    q_.push(now_ + latency, kLatencyDone, slot, a.generation);
  } else {
    join_group(slot);
  }
}

void Engine::join_group(uint32_t slot) {
  Activity& a = acts_[slot];
  a.last = now_;
  a.rate = 0;  // forces a completion event at the re-solve
  members_[a.group].push_back(slot);
  resolve_group(a.group);
}

// Brings every member's remaining work up to date, solves the rates, and re-keys the completion of each
// member whose rate changed (the old event goes stale through the generation counter).
void Engine::resolve_group(int g) {
  std::vector<uint32_t>& m = members_[g];
  for (uint32_t slot : m) {
    Activity& a = acts_[slot];
    a.remaining = std::max(0.0, a.remaining - a.rate * static_cast<double>(now_ - a.last));
    a.last = now_;
  }
  scratch_rates_.assign(m.size(), 0.0);
  if (g == kKernels) {
    scratch_demands_.resize(m.size());
    for (size_t i = 0; i < m.size(); ++i) scratch_demands_[i] = acts_[m[i]].demand;
    max_min_fair_rates(scratch_demands_, scratch_rates_, scratch_order_);
  } else if (serial_copies_) {
    if (!m.empty()) scratch_rates_[0] = 1.0;  // one engine: the copy that reached it first
  } else {
    for (double& r : scratch_rates_) r = 1.0 / static_cast<double>(m.size());  // equal bandwidth shares
  }
  for (size_t i = 0; i < m.size(); ++i) {
    Activity& a = acts_[m[i]];
    if (scratch_rates_[i] == a.rate) continue;
    a.rate = scratch_rates_[i];
    ++a.generation;
    if (a.rate > 0)
      q_.push(now_ + static_cast<TimeNs>(std::ceil(a.remaining / a.rate)), kActivityDone, m[i], a.generation);
  }
}

void Engine::finish_activity(uint32_t slot) {
  Activity& a = acts_[slot];
  std::vector<uint32_t>& m = members_[a.group];
  m.erase(std::find(m.begin(), m.end(), slot));
  a.in_use = false;
  ++a.generation;
  free_slots_.push_back(slot);
  const StreamCmd c = a.cmd;
  if (opt_.record_trace) {
    if (a.kernel) {
      r_.trace.ops.push_back({c.iteration, c.op, a.stream, a.start, now_});
    } else {
      r_.trace.copies.push_back({c.iteration, c.tensor, a.to_host, ctx_.graph.tensor(c.tensor).bytes, a.start, now_});
    }
  }
  resolve_group(a.group);
  Stream& st = streams_[static_cast<size_t>(a.stream)];
  st.busy = false;
  st.fifo.pop_front();
  command_done(c.iteration);
}

void Engine::command_done(int iteration) {
  --pending_[tally_index(iteration)];
  --pending_total_;
  if (iteration >= 0 && iteration < opt_.iterations) maybe_close_iteration(iteration);
}

void Engine::maybe_close_iteration(int i) {
  const auto k = tally_index(i);
  if (host_done_[k] && pending_[k] == 0 && iter_end_[static_cast<size_t>(i)] < 0)
    iter_end_[static_cast<size_t>(i)] = now_;
}

}  // namespace dlsim::sim_engine
