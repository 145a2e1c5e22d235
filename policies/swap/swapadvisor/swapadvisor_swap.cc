#include "policies/swap/swapadvisor/swapadvisor_swap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <random>

#include "policies/swap/swapadvisor/swapadvisor_selection.h"

namespace dlsim {

const ParamBindings<SwapAdvisorOptions>& SwapAdvisorOptions::parameters() {
  using O = SwapAdvisorOptions;
  static const auto b = ParamBindings<O>()
      .add("min_bytes", &O::min_bytes, "smallest tensor the slots manage", ParamCheck::at_least(0))
      .add("size_classes", &O::size_classes, "size classes of the memory split (at most)", ParamCheck::in_range(1, 64))
      .add("population", &O::population, "individuals per generation", ParamCheck::in_range(2, 1000))
      .add("generations", &O::generations, "generations after the first", ParamCheck::in_range(0, 1000))
      .add("seed", &O::seed, "random seed (the search is deterministic for a seed)", ParamCheck::at_least(0))
      .add("reorder", &O::reorder, "search the op schedule as well as the memory split")
      .add_all(&O::limit, MemoryLimit::parameters());
  return b;
}

namespace {

struct Individual {
  std::vector<double> priority;  // per op
  std::vector<int> slots;        // per class
  TimeNs fitness = std::numeric_limits<TimeNs>::max();
  std::vector<OpId> order;
  SwapPlan plan;
};

// Kahn's algorithm on the op DAG, the ready op of highest priority first (ties: lower op id).
std::vector<OpId> decode(const Graph::Dag& dag, const std::vector<double>& priority) {
  const size_t n = boost::num_vertices(dag);
  std::vector<int> indeg(n, 0);
  for (auto [e, end] = boost::edges(dag); e != end; ++e) ++indeg[boost::target(*e, dag)];
  auto cmp = [&](size_t a, size_t b) { return priority[a] != priority[b] ? priority[a] < priority[b] : a > b; };
  std::priority_queue<size_t, std::vector<size_t>, decltype(cmp)> ready(cmp);
  for (size_t v = 0; v < n; ++v)
    if (indeg[v] == 0) ready.push(v);
  std::vector<OpId> order;
  while (!ready.empty()) {
    const size_t v = ready.top();
    ready.pop();
    order.push_back(static_cast<OpId>(v));
    for (auto [e, end] = boost::out_edges(v, dag); e != end; ++e)
      if (--indeg[boost::target(*e, dag)] == 0) ready.push(boost::target(*e, dag));
  }
  return order;
}

// Fewer slots until the split fits the limit: one at a time from the class with the most bytes above what its
// ops need at once (never below that, nor below its persistent tensors).
void repair(std::vector<int>& slots, const SizeClasses& sc, uint64_t limit) {
  uint64_t total = sc.unmanaged_peak;
  for (size_t c = 0; c < slots.size(); ++c) {
    slots[c] = std::max(slots[c], sc.least_slots[c]);
    total += static_cast<uint64_t>(slots[c]) * sc.slot_bytes[c];
  }
  while (total > limit) {
    size_t pick = slots.size();
    uint64_t most = 0;
    for (size_t c = 0; c < slots.size(); ++c) {
      const uint64_t spare = static_cast<uint64_t>(slots[c] - sc.least_slots[c]) * sc.slot_bytes[c];
      if (spare > most) {
        most = spare;
        pick = c;
      }
    }
    if (pick == slots.size()) return;  // nothing left to give: the individual stays infeasible
    --slots[pick];
    total -= sc.slot_bytes[pick];
  }
}

}  // namespace

SwapResult SwapAdvisorSwap::plan(const SwapContext& ctx) {
  const Graph& g = ctx.graph;
  SwapResult out;
  const uint64_t limit = o_.limit.resolve(ctx.profile.peak_live_bytes, ctx.device_capacity);
  out.target_bytes = limit;
  const ProgramLoad load(g, ctx.schedule.order);
  if (load.peak() <= limit) {
    out.report = {{"evaluated", 0}, {"feasible", true}, {"note", "no swap needed"}};
    return out;
  }
  const SizeClasses sc = size_classes(g, load, o_.min_bytes, o_.size_classes);
  const Graph::Dag dag = g.dag();
  std::mt19937_64 rng(static_cast<uint64_t>(o_.seed));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const size_t nops = g.ops().size(), k = sc.slot_bytes.size();

  int evaluated = 0, feasible = 0;
  std::string last_why;
  auto score = [&](Individual& x) {
    repair(x.slots, sc, limit);
    x.order = o_.reorder ? decode(dag, x.priority) : ctx.schedule.order;
    SlotPlan sp = plan_with_slots(g, x.order, sc, x.slots, limit);
    x.fitness = std::numeric_limits<TimeNs>::max();
    if (!sp.feasible) {
      last_why = sp.why;
      return;
    }
    x.plan = std::move(sp.plan);
    if (ProgramLoad(g, x.order).peak_with(x.plan, ctx.schedule.stream_of) > limit) {
      last_why = "the planned load exceeds the limit";
      return;
    }
    ++feasible;
    ++evaluated;
    x.fitness = ctx.evaluator ? ctx.evaluator->evaluate(x.order, x.plan).iteration_ns
                              : static_cast<TimeNs>(x.plan.actions.size());  // no simulator: fewest swaps
  };
  auto mutate = [&](Individual& x) {
    if (o_.reorder && nops > 1) {
      const size_t a = static_cast<size_t>(unit(rng) * static_cast<double>(nops)) % nops;
      const size_t b = static_cast<size_t>(unit(rng) * static_cast<double>(nops)) % nops;
      std::swap(x.priority[a], x.priority[b]);
    }
    if (k > 0) {
      const size_t c = static_cast<size_t>(unit(rng) * static_cast<double>(k)) % k;
      x.slots[c] = std::max(sc.least_slots[c], x.slots[c] + (unit(rng) < 0.5 ? -1 : 1));
    }
  };

  // The first individual: the schedule's order, the no-swap slots scaled to the limit.
  Individual base;
  base.priority.assign(nops, 0.0);
  for (size_t i = 0; i < ctx.schedule.order.size(); ++i)
    base.priority[static_cast<size_t>(ctx.schedule.order[i])] = -static_cast<double>(i);
  base.slots = sc.peak_resident;
  std::vector<Individual> pop = {base};
  while (static_cast<int>(pop.size()) < o_.population) {
    Individual x = base;
    for (int m = 0; m < 1 + static_cast<int>(pop.size() % 4); ++m) mutate(x);
    pop.push_back(x);
  }
  for (Individual& x : pop) score(x);
  auto by_fitness = [](const Individual& a, const Individual& b) { return a.fitness < b.fitness; };
  for (int gen = 0; gen < o_.generations; ++gen) {
    std::stable_sort(pop.begin(), pop.end(), by_fitness);
    const size_t keep = std::max<size_t>(1, pop.size() / 4);
    std::vector<Individual> next(pop.begin(), pop.begin() + static_cast<std::ptrdiff_t>(keep));
    auto pick = [&]() -> const Individual& {  // tournament of two
      const size_t a = static_cast<size_t>(unit(rng) * static_cast<double>(pop.size())) % pop.size();
      const size_t b = static_cast<size_t>(unit(rng) * static_cast<double>(pop.size())) % pop.size();
      return pop[std::min(a, b)];  // pop is sorted: the lower index is the fitter
    };
    while (next.size() < pop.size()) {
      const Individual& p1 = pick();
      const Individual& p2 = pick();
      Individual child;
      child.priority.resize(nops);
      for (size_t i = 0; i < nops; ++i) child.priority[i] = unit(rng) < 0.5 ? p1.priority[i] : p2.priority[i];
      child.slots.resize(k);
      for (size_t c = 0; c < k; ++c) child.slots[c] = unit(rng) < 0.5 ? p1.slots[c] : p2.slots[c];
      mutate(child);
      score(child);
      next.push_back(std::move(child));
    }
    pop = std::move(next);
  }
  std::stable_sort(pop.begin(), pop.end(), by_fitness);
  const Individual& best = pop.front();
  if (best.fitness == std::numeric_limits<TimeNs>::max()) {
    out.report = {{"evaluated", evaluated}, {"feasible", false}, {"size_classes", k}, {"why", last_why}};
    return out;  // no individual met the limit: no swaps (the run reports the miss)
  }
  out.plan = best.plan;
  if (best.order != ctx.schedule.order) out.order = best.order;
  std::vector<double> slot_mib;
  for (double b : sc.slot_bytes) slot_mib.push_back(b / (1 << 20));
  out.report = {{"evaluated", evaluated},       {"feasible", true},
                {"size_classes", k},            {"slot_mib", slot_mib},
                {"slots", best.slots},          {"swaps", best.plan.actions.size()},
                {"reordered", !out.order.empty()}};
  return out;
}

}  // namespace dlsim
