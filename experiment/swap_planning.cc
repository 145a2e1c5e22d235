#include "experiment/swap_planning.h"

#include <algorithm>
#include <map>
#include <set>

#include "experiment/experiment_pool.h"
#include "experiment/swap_evaluator.h"
#include "common/config_error.h"
#include "policies/pool/virtual_device_memory.h"
#include "policies/swap/core/host_step.h"
#include "policies/swap/core/program_load.h"
#include "policies/swap/core/swap_lower_bound.h"
#include "sim/executor.h"
#include "program/lower.h"

namespace dlsim {

IterationProfile profile_without_swaps(const Experiment& e, const Graph& g, const Schedule& s, const Hardware& hw) {
  const Program p = lower(g, s, SwapPlan{});
  VirtualDeviceMemory dev(kUnlimitedDeviceBytes);
  auto pool = make_pool(e, dev);
  SimContext ctx{g, hw.spec, *hw.kernels, *hw.link, *pool, dev};
  SimOptions opt;
  opt.iterations = e.iterations;
  const RunResult r = simulate(p, ctx, opt);
  // A device without a limit still has the pool's own (tf-bfc's memory_limit_mb, pytorch-caching's
  // memory_fraction): a pool that cannot hold the run without swapping leaves no iteration to plan from (the
  // profile used to read the first iteration of an empty trace).
  if (r.iterations_completed < e.iterations)
    throw ConfigError(e.file, e.pool.line, "pool",
                      "the swap policy plans from the same run without swapping, and pool '" + e.pool.label() +
                          "' ran out of memory in it even on a device without a memory limit (" + r.trace.oom_where +
                          "): its own limit is below what the model needs without swapping; raise it");
  IterationProfile prof;
  prof.order = s.order;
  prof.iteration_ns = r.steady_iteration_ns;
  prof.peak_live_bytes = r.peak_live_bytes;
  const int last = r.iterations_completed - 1;
  const TimeNs origin = last > 0 ? r.trace.iterations[static_cast<size_t>(last - 1)].end : r.trace.iterations[0].start;
  std::vector<TimeNs> start(g.ops().size(), 0), end(g.ops().size(), 0);
  for (const OpRecord& rec : r.trace.ops)
    if (rec.iteration == last) {
      start[static_cast<size_t>(rec.op)] = rec.start - origin;
      end[static_cast<size_t>(rec.op)] = rec.end - origin;
    }
  for (OpId id : s.order) {
    prof.op_start.push_back(start[static_cast<size_t>(id)]);
    prof.op_end.push_back(end[static_cast<size_t>(id)]);
  }
  return prof;
}

namespace {

// Busy time of one copy direction in iteration `it`: the union of its copies' spans.
TimeNs busy(const Trace& t, int it, bool to_host) {
  std::vector<std::pair<TimeNs, TimeNs>> spans;
  for (const CopyRecord& c : t.copies)
    if (c.iteration == it && c.to_host == to_host) spans.push_back({c.start, c.end});
  std::sort(spans.begin(), spans.end());
  TimeNs total = 0, cur_s = 0, cur_e = -1;
  for (auto [s, e] : spans) {
    if (s > cur_e) {
      if (cur_e > cur_s) total += cur_e - cur_s;
      cur_s = s;
      cur_e = e;
    } else {
      cur_e = std::max(cur_e, e);
    }
  }
  if (cur_e > cur_s) total += cur_e - cur_s;
  return total;
}

// One run of `p` as the experiment will run it (its pool on the hardware's device), without a trace: whether it
// completed its iterations, its steady iteration and the memory it needs. That is the pool's peak reserved, unless
// the pool reserves its arena up front (cnmem): the arena is the user's setting, not the plan's, so what the plan
// changes is the live peak that must fit in it.
struct SwapTrialRun {
  bool completed = false;
  TimeNs iteration_ns = 0;
  uint64_t peak_reserved_bytes = 0;
  uint64_t peak_live_bytes = 0;
  bool arena_up_front = false;
  uint64_t needed_bytes() const { return arena_up_front ? peak_live_bytes : peak_reserved_bytes; }
};

SwapTrialRun swap_trial_run(const Experiment& e, const Graph& g, const Hardware& hw, const Program& p) {
  VirtualDeviceMemory dev(hw.spec.memory_bytes, hw.spec.total_memory_bytes);
  auto pool = make_pool(e, dev);
  SimContext ctx{g, hw.spec, *hw.kernels, *hw.link, *pool, dev};
  SimOptions opt;
  opt.iterations = e.iterations;
  opt.launch = e.launch;
  opt.sync_every_iteration = e.sync_every_step;
  opt.record_trace = false;
  const RunResult r = simulate(p, ctx, opt);
  return {r.iterations_completed == e.iterations, r.steady_iteration_ns, r.peak_reserved_bytes, r.peak_live_bytes,
          pool->up_front_bytes() > 0};
}

nlohmann::json trial_json(const SwapTrialRun& t) {
  if (!t.completed) return {{"out_of_memory", true}};
  return {{"iteration_time_us", static_cast<double>(t.iteration_ns) / 1000.0},
          {"peak_reserved_bytes", t.peak_reserved_bytes}, {"peak_live_bytes", t.peak_live_bytes}};
}

// A plan that misses its limit is still worth having when it saves memory (the least memory the policy found) or
// time. One that needs at least as much memory as running without swapping (SwapTrialRun::needed_bytes) and is no
// faster, or that runs out of memory where running without swapping does not, is worse than doing nothing: the run
// falls back to no plan and the report says why (issue 31: fastest-under-limit at 0.6 on VGG-16 b64 took 4.3x the time and reserved 8,111
// MiB against no swapping's 6,619).
void fall_back_if_worse_than_none(const Experiment& e, const Graph& g, Schedule& schedule, const Hardware& hw,
                                  Program& program, SwapPlanning& out) {
  Schedule bare_schedule = schedule;
  bare_schedule.order = out.profile.order;
  Program bare = lower(g, bare_schedule, SwapPlan{});
  const SwapTrialRun none = swap_trial_run(e, g, hw, bare);
  if (!none.completed) return;  // doing nothing fails on this device: the plan is the only chance
  const SwapTrialRun planned = swap_trial_run(e, g, hw, program);
  if (planned.completed && (planned.needed_bytes() < none.needed_bytes() || planned.iteration_ns < none.iteration_ns))
    return;
  out.result.report["fell_back_to_no_swap"] = {
      {"reason", planned.completed ? std::string("the plan missed its limit and needed no less memory than no swapping (") +
                                         (none.arena_up_front ? "live peak: the pool's arena is reserved up front"
                                                              : "peak reserved") + "), no faster"
                                   : "the plan missed its limit and ran out of memory where no swapping does not"},
      {"discarded_plan", trial_json(planned)},
      {"no_swap", trial_json(none)}};
  out.result.plan = SwapPlan{};
  out.result.order.clear();
  schedule = bare_schedule;
  program = std::move(bare);
  out.planned_peak_bytes = ProgramLoad(g, schedule.order).peak_with(out.result.plan, schedule.stream_of);
}

}  // namespace

namespace {

// FSDP with recomputation: a replayed op reads its unit's regathered parameters (Graph::replay_source), which the
// unit's backward all-gather makes. A checkpointed segment spanning several FSDP units is recomputed when the
// backward reaches its last unit, before the inner units' backward all-gathers; FSDP2 would all-gather each inner
// unit again inside the recomputation (its pre-forward hook), which is not modelled. Refused with the way out,
// before the lowering would fail on the tensor.
void check_replays_follow_regathers(const Experiment& e, const Graph& g, const Schedule& schedule, const SwapPlan& plan) {
  if (g.replay_source.empty() || plan.recomputations.empty()) return;
  std::map<TensorId, int> made_at;  // the position of the op that first writes each tensor
  for (size_t i = 0; i < schedule.order.size(); ++i)
    for (TensorId t : g.op(schedule.order[i]).outputs) made_at.emplace(t, static_cast<int>(i));
  for (const Recomputation& rc : plan.recomputations)
    for (OpId o : rc.ops)
      for (const auto& [forward_copy, regathered] : g.replay_source) {
        const std::vector<TensorId>& in = g.op(o).inputs;
        if (std::find(in.begin(), in.end(), forward_copy) == in.end()) continue;
        const auto m = made_at.find(regathered);
        if (m == made_at.end() || m->second <= rc.before) continue;
        throw ConfigError(e.file, e.swap.line, "swap",
                          "'" + e.swap.name + "' recomputes op '" + g.op(o).name + "' before its FSDP unit's backward "
                          "all-gather (of '" + g.tensor(regathered).name + "'): a recomputed segment spanning several "
                          "FSDP units is not modelled (FSDP2 would all-gather each inner unit again inside the "
                          "recomputation); checkpoint one unit per segment (checkpoint with every: 1) or wrap: root");
      }
}

}  // namespace

SwapPlanning plan_swaps(const Experiment& e, const Graph& g, Schedule& schedule, const Hardware& hw, Program& program) {
  SwapPlanning out;
  out.profile = profile_without_swaps(e, g, schedule, hw);
  auto policy = swap_registry().create(e.swap.name, e.swap.params);
  {
    SimulatedPlanEvaluator evaluator(e, g, schedule, hw);
    SwapContext ctx{g, schedule, out.profile, *hw.link, hw.spec.memory_bytes, &evaluator};
    out.result = policy->plan(ctx);
    out.evaluations = evaluator.evaluations();
  }
  const ProgramLoad before(g, schedule.order);
  if (!out.result.order.empty()) schedule.order = out.result.order;
  if (!out.result.plan.host_step.empty() && !(hw.spec.host_adam_bytes_per_s > 0))
    throw ConfigError(hw.spec.file, 0, "host_cpu.adam_gb_per_s",
                      "swap policy '" + e.swap.name + "' runs the optimizer step on the CPU, and the hardware file gives "
                      "no CPU Adam rate: add host_cpu: {adam_gb_per_s: ...} (configs/hw/README.md)");
  check_replays_follow_regathers(e, g, schedule, out.result.plan);
  program = lower(g, schedule, out.result.plan);  // rejects a plan that does not fit, naming the tensor
  out.planned_peak_bytes = ProgramLoad(g, schedule.order).peak_with(out.result.plan, schedule.stream_of);
  if (out.result.target_bytes > 0 && out.planned_peak_bytes > out.result.target_bytes)
    fall_back_if_worse_than_none(e, g, schedule, hw, program, out);
  const uint64_t aim = out.result.target_bytes > 0 ? out.result.target_bytes : out.planned_peak_bytes;
  out.bound_applies = out.result.plan.recomputations.empty() && out.result.plan.host_step.empty();
  if (!out.bound_applies) return out;
  const SwapLowerBound b = swap_lower_bound(g, before, out.profile, *hw.link, aim);
  out.bound_reachable = b.reachable;
  out.least_reachable_bytes = b.least_reachable_bytes;
  out.lower_bound_ns = b.iteration_ns;
  return out;
}

nlohmann::json swap_figures(const SwapPlanning& s, const Graph& g, const Program& p, const Trace& trace,
                            double iteration_time_us, uint64_t peak_live_bytes) {
  uint64_t out_bytes = 0, in_bytes = 0, transfers = 0;
  for (const Command& c : p.iteration) {
    if (c.kind == CmdKind::CopyOut) out_bytes += g.tensor(c.tensor).bytes;
    if (c.kind == CmdKind::CopyIn) in_bytes += g.tensor(c.tensor).bytes;
    if (c.kind == CmdKind::CopyOut || c.kind == CmdKind::CopyIn) ++transfers;
  }
  std::set<TensorId> hosted;  // one pinned host buffer per tensor the Program copies (as dlsim-cuda allocates)
  for (const auto* sec : {&p.setup, &p.iteration, &p.teardown})
    for (const Command& c : *sec)
      if (c.kind == CmdKind::CopyOut || c.kind == CmdKind::CopyIn) hosted.insert(c.tensor);
  uint64_t pinned = 0;
  for (TensorId t : hosted) pinned += g.tensor(t).bytes;
  const double base_us = static_cast<double>(s.profile.iteration_ns) / 1000.0;
  const int last = static_cast<int>(trace.iterations.size()) - 1;
  const double it_ns = iteration_time_us * 1000.0;
  const uint64_t target = s.result.target_bytes;
  nlohmann::json j;
  j["swap_out_bytes"] = out_bytes;
  j["swap_in_bytes"] = in_bytes;
  j["swap_transfers"] = transfers;
  j["pinned_host_bytes"] = pinned;
  j["no_swap_iteration_time_us"] = base_us;
  j["no_swap_peak_live_bytes"] = s.profile.peak_live_bytes;
  if (iteration_time_us > 0) {  // a run that ran out of memory has no steady iteration to compare
    j["stall_us"] = iteration_time_us - base_us;
    // Against a no-swap iteration of no time there is no relative overhead: none is given, rather than 0.
    if (base_us > 0) j["overhead"] = (iteration_time_us - base_us) / base_us;
    // Fractions of that iteration; an out-of-memory run has none, so none is given (a 0 would read as "idle").
    if (last >= 0) {
      j["copy_d2h_busy"] = static_cast<double>(busy(trace, last, true)) / it_ns;
      j["copy_h2d_busy"] = static_cast<double>(busy(trace, last, false)) / it_ns;
    }
  }
  j["swap_target_bytes"] = target;
  j["swap_planned_peak_bytes"] = s.planned_peak_bytes;
  // target 0: the policy aims at no limit (a policy that takes one always has one: MemoryLimit::resolve never
  // rounds a set limit to 0 bytes).
  const bool limit_met = target == 0 || peak_live_bytes <= target;
  j["swap_limit_met"] = limit_met;
  j["swap_limit_miss_bytes"] = target > 0 && peak_live_bytes > target ? peak_live_bytes - target : 0;
  // Recomputation: the dropped bytes, the launches re-run and their device time in the last iteration (every
  // launch of an op after its first there).
  uint64_t dropped = 0, replays = 0;
  std::map<OpId, int> launches;
  for (const Command& c : p.iteration)
    if (c.kind == CmdKind::Launch && launches[c.op]++ > 0) ++replays;
  for (const Recomputation& rc : s.result.plan.recomputations)
    for (const Recomputation::Drop& d : rc.drops) dropped += g.tensor(d.tensor).bytes;
  std::map<OpId, std::vector<TimeNs>> spans;
  for (const OpRecord& r : trace.ops)
    if (r.iteration == last && launches[r.op] > 1) spans[r.op].push_back(r.end - r.start);
  TimeNs rerun_ns = 0;
  for (auto& [op, v] : spans)
    for (size_t i = 1; i < v.size(); ++i) rerun_ns += v[i];
  j["dropped_bytes"] = dropped;
  j["recomputed_launches"] = replays;
  j["recompute_us"] = static_cast<double>(rerun_ns) / 1000.0;
  // Host step (ZeRO-Offload): the CPU's time in the last iteration and the host memory it keeps.
  TimeNs host_ns = 0;
  for (const OpRecord& r : trace.ops)
    if (r.iteration == last && p.host_stream(r.stream)) host_ns += r.end - r.start;
  if (!s.result.plan.host_step.empty()) {
    j["host_step_us"] = static_cast<double>(host_ns) / 1000.0;
    j["host_optimizer_bytes"] = host_step_tensors(g, s.profile.order, s.result.plan.host_step).host_state_bytes;
  }
  // The bound is at the target: it holds for this plan when the plan only copies and kept to the target. A plan
  // that missed the target used more memory than the bound allows for and may run faster than it, so it gets no
  // gap (a negative "gap" read as beating the best possible). swap_lower_bound_us stays: it is a figure of the
  // limit (the best any plan that keeps to it can do), the same for every policy at that limit.
  j["swap_bound_applies"] = s.bound_applies && limit_met;
  j["swap_bound_reachable"] = s.bound_reachable;
  j["swap_least_reachable_bytes"] = s.least_reachable_bytes;
  if (s.bound_applies && s.bound_reachable) {
    const double lb_us = static_cast<double>(s.lower_bound_ns) / 1000.0;
    j["swap_lower_bound_us"] = lb_us;
    if (limit_met && lb_us > 0 && iteration_time_us > 0) j["swap_gap_to_bound"] = iteration_time_us / lb_us - 1.0;
  }
  j["swap_evaluations"] = s.evaluations;
  j["swap_report"] = s.result.report;
  return j;
}

}  // namespace dlsim
