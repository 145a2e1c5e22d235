// The built-in concurrency policies, in the order `dlsim list` shows them. The schedule builders are in
// schedules.h; here are their parameters and the checks that keep each policy's promises.
#include <algorithm>

#include "common/param_binding.h"
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

// max_streams, a parameter of every policy but serial; the default is each policy's own (its options' member).
template <class O>
ParamBindings<O> max_streams_parameter() {
  return ParamBindings<O>().add("max_streams", &O::max_streams,
                                "compute streams at most (the hardware allows " +
                                    std::to_string(kMaxHardwareStreams) + ")",
                                ParamCheck::at_least(1));
}

// base and max_streams, the parameters of the policies that build on a base policy.
template <class O>
ParamBindings<O> base_and_streams_parameters(const std::string& base_meaning) {
  return ParamBindings<O>()
      .add("base", &O::base, base_meaning, ParamCheck::one_of(kBases))
      .add_all(max_streams_parameter<O>());
}

// Each policy's options, with its defaults.
struct BranchStreamsOptions {
  int max_streams = 4;
  static const ParamBindings<BranchStreamsOptions>& parameters() {
    static const auto b = max_streams_parameter<BranchStreamsOptions>();
    return b;
  }
};

struct CriticalPathOptions {
  int max_streams = 4;
  static const ParamBindings<CriticalPathOptions>& parameters() {
    static const auto b = max_streams_parameter<CriticalPathOptions>();
    return b;
  }
};

const ParamBindings<IosOptions>& ios_parameters() {
  using O = IosOptions;
  static const auto b = max_streams_parameter<O>()
      .add("r", &O::max_group_size, "max_group_size: ops (units) in one group of a stage", ParamCheck::in_range(1, 16))
      .add("s", &O::max_num_groups, "max_num_groups: groups in one stage", ParamCheck::in_range(1, 8))
      .add("max_part_ops", &O::max_part_ops, "units in one block of the dynamic program", ParamCheck::in_range(2, 24))
      .add("max_work", &O::max_work,
           "the dynamic program's work bound: units of candidate stages looked at plus ops priced; past it ios "
           "stops with an error",
           ParamCheck::in_range(1000, int64_t{1} << 50))
      .add_choice("stage_costs", &O::simulate_stages, ParamChoices<bool>{{"simulator", true}, {"estimate", false}},
                  "how a candidate stage is priced: simulator (the device model runs it: block dispatch, tail "
                  "overlap, HBM sharing) or estimate (max-min fair SM shares, faster)");
  return b;
}

struct DgradWgradOptions {
  std::string base = "serial";
  int max_streams = 2;
  bool optimizer_overlap = false;
  static const ParamBindings<DgradWgradOptions>& parameters() {
    static const auto b =
        base_and_streams_parameters<DgradWgradOptions>("the policy that places everything else")
            .add("optimizer_overlap", &DgradWgradOptions::optimizer_overlap, "also apply optimizer-overlap");
    return b;
  }
};

struct OptimizerOverlapOptions {
  std::string base = "serial";
  int max_streams = 2;
  bool dgrad_wgrad = false;
  static const ParamBindings<OptimizerOverlapOptions>& parameters() {
    static const auto b =
        base_and_streams_parameters<OptimizerOverlapOptions>("the policy that places everything else")
            .add("dgrad_wgrad", &OptimizerOverlapOptions::dgrad_wgrad, "also apply dgrad-wgrad");
    return b;
  }
};

struct AlgorithmAwareOptions {
  std::string base = "branch-streams";
  int max_streams = 4;
  static const ParamBindings<AlgorithmAwareOptions>& parameters() {
    static const auto b = base_and_streams_parameters<AlgorithmAwareOptions>("the policy that places the ops");
    return b;
  }
};

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
  IosOptions o;  // ios's defaults but for max_streams
  o.max_streams = max_streams;
  return no_slower_than_serial(ios_schedule(g, dag, op_costs(g, cost), with_context(o, ctx)), g, dag, cost, ctx);
}

}  // namespace

const ConcurrencyRegistry& concurrency_registry() {
  static const ConcurrencyRegistry reg = [] {
    ConcurrencyRegistry r("concurrency policy");
    r.add({"serial", "every op on one stream in graph order (the frameworks' default)", {},
           [](const Params&) -> std::unique_ptr<ConcurrencyPolicy> { return std::make_unique<Serial>(); }});
    r.add({"branch-streams",
           "each branch of a fork-join region on its own stream, forward and backward (Caffe/TF multi-stream, SPAA'20)",
           BranchStreamsOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<ConcurrencyPolicy> {
             return std::make_unique<BranchStreams>(BranchStreamsOptions::parameters().from_params(p).max_streams);
           }});
    r.add({"critical-path", "list scheduling by longest remaining path (standalone kernel times) onto max_streams streams",
           CriticalPathOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<ConcurrencyPolicy> {
             return std::make_unique<CriticalPath>(CriticalPathOptions::parameters().from_params(p).max_streams);
           }});
    r.add({"ios",
           "IOS's dynamic program over stages of concurrent groups (Ding et al., MLSys'21), forward and backward; "
           "never slower than serial",
           ios_parameters().specs(), [](const Params& p) -> std::unique_ptr<ConcurrencyPolicy> {
             return std::make_unique<Ios>(ios_parameters().from_params(p));
           }});
    r.add({"dgrad-wgrad",
           "a base policy with every conv/linear backward-weight kernel on a side stream beside backward-data (MXNet #14006)",
           DgradWgradOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<ConcurrencyPolicy> {
             const DgradWgradOptions o = DgradWgradOptions::parameters().from_params(p);
             return std::make_unique<TrainingOverlap>(o.base, o.max_streams, true, o.optimizer_overlap);
           }});
    r.add({"optimizer-overlap",
           "a base policy with each parameter's update on a side stream, issued as soon as its gradient is ready",
           OptimizerOverlapOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<ConcurrencyPolicy> {
             const OptimizerOverlapOptions o = OptimizerOverlapOptions::parameters().from_params(p);
             return std::make_unique<TrainingOverlap>(o.base, o.max_streams, o.dgrad_wgrad, true);
           }});
    r.add({"algorithm-aware",
           "a base policy plus, per convolution, the kernel variant (smaller grid, no workspace) that wins under "
           "co-execution (SPAA'20's and Rammer's remedy)",
           AlgorithmAwareOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<ConcurrencyPolicy> {
             const AlgorithmAwareOptions o = AlgorithmAwareOptions::parameters().from_params(p);
             return std::make_unique<AlgorithmAware>(o.base, o.max_streams);
           }});
    return r;
  }();
  return reg;
}

}  // namespace dlsim
