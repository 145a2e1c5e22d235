#include "sim/device_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/sim_time.h"
#include "sim/fluid_share.h"

namespace dlsim {

DeviceModel::DeviceModel(const Graph& graph, const GpuSpec& gpu, const KernelCostModel& kernels,
                         const TransferModel& link, int num_streams, int num_events, EventQueue& queue,
                         DeviceListener& listener, Trace* trace)
    : graph_(graph),
      kernels_(kernels),
      link_(link),
      gpu_file_(gpu.file),
      queue_(queue),
      listener_(listener),
      trace_(trace),
      serial_copies_(gpu.copy_engines < 2) {
  // Negative counts are the executor's to report (it checks the Program before running it).
  streams_.resize(static_cast<size_t>(std::max(num_streams, 0)));
  records_done_.assign(static_cast<size_t>(std::max(num_events, 0)), 0);
  costs_.assign(graph.ops().size(), KernelCost{});
  cost_known_.assign(graph.ops().size(), 0);
}

void DeviceModel::enqueue(int stream, const StreamCmd& c) {
  streams_[static_cast<size_t>(stream)].fifo.push_back(c);
  ++pending_;
}

void DeviceModel::settle(TimeNs now) {
  now_ = now;
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t s = 0; s < streams_.size(); ++s) progress |= advance_stream(static_cast<int>(s));
  }
}

void DeviceModel::handle(const Event& e, TimeNs now) {
  now_ = now;
  Activity& a = acts_[e.payload];
  if (!a.in_use || a.generation != e.generation) return;  // stale: its rate changed, or it finished
  if (e.type == kActivityDone) finish_activity(e.payload);
  else join_group(e.payload);  // kLatencyDone
}

bool DeviceModel::advance_stream(int s) {
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

const KernelCost& DeviceModel::kernel_cost(OpId op) {
  const auto i = static_cast<size_t>(op);
  if (!cost_known_[i]) {
    costs_[i] = kernels_.cost(graph_, graph_.op(op));
    if (!(costs_[i].sm_fraction > 0 && costs_[i].sm_fraction <= 1) || costs_[i].duration_ns < 0)
      throw std::logic_error("kernel cost model gave op '" + graph_.op(op).name +
                             "' a duration < 0 or an sm_fraction outside (0, 1]");
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

void DeviceModel::join_group(uint32_t slot) {
  Activity& a = acts_[slot];
  a.last = now_;
  a.rate = 0;  // forces a completion event at the re-solve
  members_[a.group].push_back(slot);
  resolve_group(a.group);
}

// Brings every member's remaining work up to date, solves the rates, and re-keys the completion of each
// member whose rate changed (the old event goes stale through the generation counter).
void DeviceModel::resolve_group(int g) {
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
    if (a.rate > 0) {
      // Clamped before the conversion, so that a time past the clock's bound is add_time's error, not a wrap.
      const double left = std::min(std::ceil(a.remaining / a.rate), static_cast<double>(kMaxSimTimeNs) + 1.0);
      queue_.push(add_time(now_, static_cast<TimeNs>(left), gpu_file_), kActivityDone, m[i], a.generation);
    }
  }
}

void DeviceModel::finish_activity(uint32_t slot) {
  Activity& a = acts_[slot];
  std::vector<uint32_t>& m = members_[a.group];
  m.erase(std::find(m.begin(), m.end(), slot));
  a.in_use = false;
  ++a.generation;
  free_slots_.push_back(slot);
  const StreamCmd c = a.cmd;
  if (trace_) {
    if (a.kernel) {
      trace_->ops.push_back({c.iteration, c.op, a.stream, a.start, now_});
    } else {
      trace_->copies.push_back({c.iteration, c.tensor, a.to_host, graph_.tensor(c.tensor).bytes, a.start, now_});
    }
  }
  resolve_group(a.group);
  Stream& st = streams_[static_cast<size_t>(a.stream)];
  st.busy = false;
  st.fifo.pop_front();
  command_done(c.iteration);
}

void DeviceModel::command_done(int iteration) {
  --pending_;
  listener_.command_done(iteration);
}

}  // namespace dlsim
