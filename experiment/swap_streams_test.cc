// Swap policies on a schedule of two compute streams (ops alternate between them; the lowering adds the events):
// every plan lowers, runs through the independent checkers (swap and memory reuse), and keeps the peak its load
// promises. The alternating schedule is made here because it crosses streams at every edge; the registered
// concurrency policies beside swapping are run end to end by the simulation fuzzer and a scenario
// (tests/scenarios/swap/googlenet-vdnn-beside-branch-streams.yaml).
#include <catch2/catch.hpp>

#include "experiment/experiment.h"
#include "experiment/run_experiment.h"
#include "experiment/swap_evaluator.h"
#include "sim/check/swap_plan_checker.h"
#include "experiment/swap_planning.h"
#include "policies/pool/virtual_device_memory.h"
#include "policies/swap/core/program_load.h"
#include "sim/executor.h"
#include "program/lower.h"
#include "sim/check/memory_reuse_check.h"

using namespace dlsim;

TEST_CASE("swap plans on a two-stream schedule pass the independent checker and keep their promised peak") {
  for (const char* swap : {"{name: singa, limit_fraction: 0.7}", "{name: singa, mode: no-overhead, limit_fraction: 0.7}",
                           "{name: vdnn}", "save-on-cpu", "{name: swapadvisor, limit_fraction: 0.8, population: 3, generations: 1}",
                           "{name: fastest-under-limit, limit_fraction: 0.7}"}) {
    INFO(swap);
    const Experiment e = experiment_from_yaml(
        YAML::Load(std::string("{model: cifar-resnet20, batch: 100, hw: h100-sxm, pool: cnmem, concurrency: serial,"
                               " iterations: 2, swap: ") + swap + "}"),
        "streams");
    Experiment plain = e;
    plain.swap.name = "none";
    PreparedExperiment p = prepare_experiment(plain);
    for (const Op& o : p.graph.ops()) p.schedule.stream_of[static_cast<size_t>(o.id)] = o.id % 2;
    p.schedule.num_streams = 2;
    const IterationProfile prof = profile_without_swaps(e, p.graph, p.schedule, p.hw);
    SimulatedPlanEvaluator evaluator(e, p.graph, p.schedule, p.hw);
    const SwapResult r = swap_registry().create(e.swap.name, e.swap.params)->plan(
        {p.graph, p.schedule, prof, *p.hw.link, p.hw.spec.memory_bytes, &evaluator});
    Schedule s = p.schedule;
    if (!r.order.empty()) s.order = r.order;
    const Program program = lower(p.graph, s, r.plan);
    VirtualDeviceMemory dev(kUnlimitedDeviceBytes);
    auto pool = make_pool(e, dev);
    SimContext ctx{p.graph, p.hw.spec, *p.hw.kernels, *p.hw.link, *pool, dev};
    SimOptions opt;
    opt.iterations = 2;
    opt.record_trace = true;
    const RunResult run = simulate(program, ctx, opt);
    REQUIRE(run.iterations_completed == 2);
    CHECK(run.peak_live_bytes == ProgramLoad(p.graph, s.order).peak_with(r.plan, s.stream_of));
    uint64_t hosted = 0;
    std::vector<uint8_t> seen(p.graph.tensors().size(), 0);
    for (const Command& c : program.iteration)
      if ((c.kind == CmdKind::CopyIn || c.kind == CmdKind::CopyOut) && !seen[static_cast<size_t>(c.tensor)]++)
        hosted += p.graph.tensor(c.tensor).bytes;
    const SwapCheck check = check_swapped_run(p.graph, program, run.trace, hosted);
    INFO((check.problems.empty() ? std::string() : check.problems.front()));
    CHECK(check.ok());
    const std::vector<std::string> races = check_memory_reuse(p.graph, program, run.trace);
    INFO((races.empty() ? std::string() : races.front()));
    CHECK(races.empty());
    CHECK_FALSE(r.plan.empty());
  }
}
