// The built-in concurrency policies, in the order `dlsim list` shows them. The schedule builders are in
// schedules.h; here are their parameters and the checks that keep each policy's promises.
#include <algorithm>

#include "policies/concurrency/concurrency_policy.h"
#include "policies/concurrency/schedule_estimate.h"
#include "policies/concurrency/schedules.h"

namespace dlsim {

Schedule serial_schedule_of(const Graph& g) {
  Schedule s;
  s.num_streams = 1;
  s.order.reserve(g.ops().size());
  for (const Op& op : g.ops()) s.order.push_back(op.id);
  s.stream_of.assign(g.ops().size(), 0);
  return s;
}

void compact_streams(Schedule& s) {
  std::vector<int> remap(static_cast<size_t>(std::max(s.num_streams, 1)), -1);
  int next = 0;
  for (OpId o : s.order) {
    int& r = remap[static_cast<size_t>(s.stream_of[static_cast<size_t>(o)])];
    if (r < 0) r = next++;
  }
  for (int& st : s.stream_of) st = remap[static_cast<size_t>(st)] < 0 ? 0 : remap[static_cast<size_t>(st)];
  s.num_streams = std::max(next, 1);
}

namespace {

const std::vector<std::string> kBases = {"serial", "branch-streams", "critical-path", "ios"};

ParamSpec max_streams_spec(int64_t dflt) {
  return {"max_streams", ParamType::Int, dflt,
          "compute streams at most (the hardware allows " + std::to_string(kMaxHardwareStreams) + ")",
          ParamCheck::at_least(1)};
}

std::vector<ParamSpec> ios_specs() {
  return {max_streams_spec(8),
          {"r", ParamType::Int, int64_t{3}, "max_group_size: ops (units) in one group of a stage", ParamCheck::in_range(1, 16)},
          {"s", ParamType::Int, int64_t{3}, "max_num_groups: groups in one stage", ParamCheck::in_range(1, 8)},
          {"max_part_ops", ParamType::Int, int64_t{16}, "units in one block of the dynamic program", ParamCheck::in_range(2, 24)},
          {"max_work", ParamType::Int, int64_t{100'000'000},
           "the dynamic program's work bound: units of candidate stages looked at plus ops priced; past it ios "
           "stops with an error",
           ParamCheck::in_range(1000, int64_t{1} << 50)},
          {"stage_costs", ParamType::String, std::string("simulator"),
           "how a candidate stage is priced: simulator (the device model runs it: block dispatch, tail overlap, HBM "
           "sharing) or estimate (max-min fair SM shares, faster)",
           ParamCheck::one_of({"simulator", "estimate"})}};
}

IosOptions with_context(IosOptions o, const ScheduleContext& ctx);

// The schedule of one of the base policies, with its own parameters at their defaults but for max_streams.
Schedule base_schedule(const std::string& base, int max_streams, const Graph& g, const OpDag& dag,
                       const KernelCostModel& cost, const ScheduleContext& ctx);

class Serial : public ConcurrencyPolicy {
 public:
  Schedule schedule(const Graph& g, const KernelCostModel&, const ScheduleContext&) override { return serial_schedule_of(g); }
};

class BranchStreams : public ConcurrencyPolicy {
 public:
  explicit BranchStreams(int m) : m_(m) {}
  Schedule schedule(const Graph& g, const KernelCostModel&, const ScheduleContext&) override {
    return branch_streams_schedule(g, op_dag(g), m_);
  }
 private:
  int m_;
};

class CriticalPath : public ConcurrencyPolicy {
 public:
  explicit CriticalPath(int m) : m_(m) {}
  Schedule schedule(const Graph& g, const KernelCostModel& cost, const ScheduleContext&) override {
    return critical_path_schedule(g, op_dag(g), op_costs(g, cost), m_);
  }
 private:
  int m_;
};

// Keeps `candidate` only where it is faster than serial: by the simulator when the caller offers it, else by
// the estimate. Serial is one of the DP's candidates, but the DP adds up estimated stage costs; this makes the
// promise hold for the simulated time.
Schedule no_slower_than_serial(Schedule candidate, const Graph& g, const OpDag& dag, const KernelCostModel& cost,
                               const ScheduleContext& ctx) {
  Schedule serial = serial_schedule_of(g);
  if (candidate.num_streams == 1 && candidate.order == serial.order && candidate.variant_of.empty()) return candidate;
  const TimeNs t_c = ctx.simulate ? ctx.simulate(candidate) : estimate_schedule(g, dag, cost, candidate, ctx.launch_overhead_ns);
  const TimeNs t_s = ctx.simulate ? ctx.simulate(serial) : estimate_schedule(g, dag, cost, serial, ctx.launch_overhead_ns);
  return t_c <= t_s ? candidate : serial;
}

class Ios : public ConcurrencyPolicy {
 public:
  explicit Ios(IosOptions o) : o_(o) {}
  Schedule schedule(const Graph& g, const KernelCostModel& cost, const ScheduleContext& ctx) override {
    const OpDag dag = op_dag(g);
    return no_slower_than_serial(ios_schedule(g, dag, op_costs(g, cost), with_context(o_, ctx)), g, dag, cost, ctx);
  }
 private:
  IosOptions o_;
};

IosOptions ios_options(const Params& p) {
  IosOptions o;
  o.max_streams = static_cast<int>(p.get_int("max_streams"));
  o.max_group_size = static_cast<int>(p.get_int("r"));
  o.max_num_groups = static_cast<int>(p.get_int("s"));
  o.max_part_ops = static_cast<int>(p.get_int("max_part_ops"));
  o.max_work = static_cast<uint64_t>(p.get_int("max_work"));
  o.simulate_stages = p.get_string("stage_costs") == "simulator";
  return o;
}

// ios's options for a run: the launch cost, and the simulator pricing the stages where asked for and offered.
IosOptions with_context(IosOptions o, const ScheduleContext& ctx) {
  o.launch_overhead_ns = ctx.launch_overhead_ns;
  if (o.simulate_stages) o.stage_time = ctx.simulate_stage;
  return o;
}

// dgrad-wgrad and optimizer-overlap: a base policy's schedule, then one or both training overlaps, each on a
// side stream taken out of max_streams.
class TrainingOverlap : public ConcurrencyPolicy {
 public:
  TrainingOverlap(std::string base, int m, bool dgrad_wgrad, bool optimizer)
      : base_(std::move(base)), m_(m), dw_(dgrad_wgrad), opt_(optimizer) {}
  Schedule schedule(const Graph& g, const KernelCostModel& cost, const ScheduleContext& ctx) override {
    const OpDag dag = op_dag(g);
    const int sides = (dw_ ? 1 : 0) + (opt_ ? 1 : 0);
    Schedule s = base_schedule(base_, std::max(1, m_ - sides), g, dag, cost, ctx);
    if (dw_) split_dgrad_wgrad(g, dag, s, m_);
    if (opt_) overlap_optimizer(g, dag, s, m_);
    return s;
  }
 private:
  std::string base_;
  int m_;
  bool dw_, opt_;
};

class AlgorithmAware : public ConcurrencyPolicy {
 public:
  AlgorithmAware(std::string base, int m) : base_(std::move(base)), m_(m) {}
  Schedule schedule(const Graph& g, const KernelCostModel& cost, const ScheduleContext& ctx) override {
    const OpDag dag = op_dag(g);
    Schedule plain = base_schedule(base_, m_, g, dag, cost, ctx);
    Schedule chosen = plain;
    choose_kernel_variants(g, dag, cost, chosen, ctx.launch_overhead_ns);
    if (chosen.variant_of.empty() || !ctx.simulate) return chosen;
    // The estimate leaves out the pool; keep the variants only if the simulator agrees they win.
    return ctx.simulate(chosen) < ctx.simulate(plain) ? chosen : plain;
  }
 private:
  std::string base_;
  int m_;
};

Schedule base_schedule(const std::string& base, int max_streams, const Graph& g, const OpDag& dag,
                       const KernelCostModel& cost, const ScheduleContext& ctx) {
  if (base == "serial") return serial_schedule_of(g);
  if (base == "branch-streams") return branch_streams_schedule(g, dag, max_streams);
  if (base == "critical-path") return critical_path_schedule(g, dag, op_costs(g, cost), max_streams);
  IosOptions o = ios_options(Params(ios_specs()));
  o.max_streams = max_streams;
  return no_slower_than_serial(ios_schedule(g, dag, op_costs(g, cost), with_context(o, ctx)), g, dag, cost, ctx);
}

int streams(const Params& p) { return static_cast<int>(p.get_int("max_streams")); }

}  // namespace

const ConcurrencyRegistry& concurrency_registry() {
  static const ConcurrencyRegistry reg = [] {
    ConcurrencyRegistry r("concurrency policy");
    r.add({"serial", "every op on one stream in graph order (the frameworks' default)", {},
           [](const Params&) -> std::unique_ptr<ConcurrencyPolicy> { return std::make_unique<Serial>(); }});
    r.add({"branch-streams",
           "each branch of a fork-join region on its own stream, forward and backward (Caffe/TF multi-stream, SPAA'20)",
           {max_streams_spec(4)},
           [](const Params& p) -> std::unique_ptr<ConcurrencyPolicy> { return std::make_unique<BranchStreams>(streams(p)); }});
    r.add({"critical-path", "list scheduling by longest remaining path (standalone kernel times) onto max_streams streams",
           {max_streams_spec(4)},
           [](const Params& p) -> std::unique_ptr<ConcurrencyPolicy> { return std::make_unique<CriticalPath>(streams(p)); }});
    r.add({"ios",
           "IOS's dynamic program over stages of concurrent groups (Ding et al., MLSys'21), forward and backward; "
           "never slower than serial",
           ios_specs(), [](const Params& p) -> std::unique_ptr<ConcurrencyPolicy> { return std::make_unique<Ios>(ios_options(p)); }});
    r.add({"dgrad-wgrad",
           "a base policy with every conv/linear backward-weight kernel on a side stream beside backward-data (MXNet #14006)",
           {{"base", ParamType::String, std::string("serial"), "the policy that places everything else", ParamCheck::one_of(kBases)},
            max_streams_spec(2),
            {"optimizer_overlap", ParamType::Bool, false, "also apply optimizer-overlap"}},
           [](const Params& p) -> std::unique_ptr<ConcurrencyPolicy> {
             return std::make_unique<TrainingOverlap>(p.get_string("base"), streams(p), true, p.get_bool("optimizer_overlap"));
           }});
    r.add({"optimizer-overlap",
           "a base policy with each parameter's update on a side stream, issued as soon as its gradient is ready",
           {{"base", ParamType::String, std::string("serial"), "the policy that places everything else", ParamCheck::one_of(kBases)},
            max_streams_spec(2),
            {"dgrad_wgrad", ParamType::Bool, false, "also apply dgrad-wgrad"}},
           [](const Params& p) -> std::unique_ptr<ConcurrencyPolicy> {
             return std::make_unique<TrainingOverlap>(p.get_string("base"), streams(p), p.get_bool("dgrad_wgrad"), true);
           }});
    r.add({"algorithm-aware",
           "a base policy plus, per convolution, the kernel variant (smaller grid, no workspace) that wins under "
           "co-execution (SPAA'20's and Rammer's remedy)",
           {{"base", ParamType::String, std::string("branch-streams"), "the policy that places the ops",
             ParamCheck::one_of(kBases)},
            max_streams_spec(4)},
           [](const Params& p) -> std::unique_ptr<ConcurrencyPolicy> {
             return std::make_unique<AlgorithmAware>(p.get_string("base"), streams(p));
           }});
    return r;
  }();
  return reg;
}

}  // namespace dlsim
