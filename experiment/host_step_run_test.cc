// The host step (ZeRO-Offload) in the lowering and the executor, on a graph small enough to time by hand: the
// gradient leaves for the host after its last backward use, the optimizer step runs on the CPU worker, the weight
// comes back after it (or, with the delayed update, the previous step's weight at the end of the next iteration);
// the optimizer state never touches the device. The independent checker passes the real programs and catches
// tampered ones.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "sim/check/swap_plan_checker.h"
#include "policies/swap/core/host_step.h"
#include "policies/swap/core/program_load.h"
#include "program/lower.h"
#include "sim/testing/fake_run.h"
#include "policies/concurrency/concurrency_policy.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// F: (x, W) -> y (1 us)   B: (y, W) -> gW (2 us)   O: Adam (W, gW, m, v) -> (W, m, v)
// Every tensor 1000 B (250 fp32 elements). On the fakes a 1000 B copy takes 1 us latency + 100 ns, and the host
// step updates 3 x 1000 B of fp32 state at 1 B/ns: 3 us.
struct OneLayer {
  Graph g;
  TensorId x, W, y, gW, m, v;
  OpId F, B, O;
  OneLayer() {
    x = tensor(g, "x", 1000);
    W = tensor(g, "W", 1000, true);
    y = tensor(g, "y", 1000);
    gW = tensor(g, "gW", 1000);
    m = tensor(g, "W.exp_avg", 1000, true);
    v = tensor(g, "W.exp_avg_sq", 1000, true);
    g.tensor(m).kind = g.tensor(v).kind = TensorKind::OptimizerState;
    g.tensor(gW).kind = TensorKind::Gradient;
    F = op(g, "F", {x, W}, {y}, 1000);
    B = op(g, "B", {y, W}, {gW}, 2000);
    O = op(g, "O", {W, gW, m, v}, {W, m, v}, 500);
    g.op(O).phase = Phase::Optimizer;
    g.op(O).kind = OpKind::AdamUpdate;
  }
};

SwapPlan host_step_plan(const OneLayer& t, bool delayed) {
  SwapPlan p;
  p.host_step.ops = {t.O};
  p.host_step.delayed_update = delayed;
  return p;
}

uint64_t pinned(const Graph& g, const Program& p) {
  std::set<TensorId> hosted;
  for (const Command& c : p.iteration)
    if (c.kind == CmdKind::CopyOut || c.kind == CmdKind::CopyIn) hosted.insert(c.tensor);
  uint64_t b = 0;
  for (TensorId h : hosted) b += g.tensor(h).bytes;
  return b;
}

RunResult run_at(const Graph& g, const Program& p, double host_bytes_per_s, int iterations = 4) {
  VirtualDeviceMemory dev(1 << 30);
  ExactCachePool pool(dev);
  AttrKernels k;
  LinearLink l(10.0, 10.0, 1000);
  GpuSpec gpu = fake_gpu();
  gpu.host_adam_bytes_per_s = host_bytes_per_s;
  SimContext ctx{g, gpu, k, l, pool, dev};
  SimOptions o;
  o.iterations = iterations;
  return simulate(p, ctx, o);
}

}  // namespace

TEST_CASE("host step: what goes where") {
  OneLayer t;
  const Schedule s = serial_schedule_of(t.g);
  const HostStepTensors h = host_step_tensors(t.g, s.order, host_step_plan(t, false).host_step);
  CHECK(h.host_only[static_cast<size_t>(t.m)] == 1);
  CHECK(h.host_only[static_cast<size_t>(t.v)] == 1);
  CHECK(h.host_only[static_cast<size_t>(t.W)] == 0);
  CHECK(h.to_host == std::vector<TensorId>{t.gW});
  CHECK(h.to_host_after[static_cast<size_t>(t.gW)] == 1);  // after B, its last device use
  CHECK(h.written_back == std::vector<TensorId>{t.W});
  CHECK(h.parameters == 250);
  CHECK(h.host_update_bytes == 3000);  // fp32 master + two moments
  CHECK(h.host_state_bytes == 4000);   // and the fp32 gradient buffer
  CHECK(host_step_ns(t.g, t.g.op(t.O), 1e9) == 3000);

  const Program p = lower(t.g, s, host_step_plan(t, false));
  CHECK(p.num_host_streams == 1);
  CHECK(p.num_streams == 4);  // compute, D2H, H2D, the CPU worker
  for (const Command& c : p.setup) CHECK((c.tensor != t.m && c.tensor != t.v));  // never on the device
  int host_computes = 0, launches_of_o = 0;
  for (const Command& c : p.iteration) {
    host_computes += c.kind == CmdKind::HostCompute;
    launches_of_o += c.kind == CmdKind::Launch && c.op == t.O;
    if (c.kind == CmdKind::HostCompute) CHECK(c.stream == 3);
  }
  CHECK(host_computes == 1);
  CHECK(launches_of_o == 0);
}

TEST_CASE("host step: the optimizer runs on the CPU between the gradient's copy out and the weight's copy in") {
  OneLayer t;
  const Schedule s = serial_schedule_of(t.g);
  const SwapPlan plan = host_step_plan(t, false);
  const Program p = lower(t.g, s, plan);
  const RunResult r = run_at(t.g, p, 1e9);
  REQUIRE(r.iterations_completed == 4);
  // F 1000 + B 2000 + gW out 1100 + CPU step 3000 + W in 1100
  CHECK(r.steady_iteration_ns == 8200);
  // W, y and gW during B; the moments stay on the host; gW is freed once copied
  CHECK(r.peak_live_bytes == 3000);
  CHECK(r.peak_live_bytes == ProgramLoad(t.g, s.order).peak_with(plan, s.stream_of));
  const SwapCheck check = check_swapped_run(t.g, p, r.trace, pinned(t.g, p));
  for (const std::string& problem : check.problems) UNSCOPED_INFO(problem);
  CHECK(check.ok());
  CHECK(check.host_bytes == 2000);  // pinned buffers for gW and W
  // A slower CPU adds its time one for one.
  CHECK(run_at(t.g, p, 0.25e9).steady_iteration_ns == 8200 - 3000 + 12000);
}

TEST_CASE("host step with the delayed update: the CPU step overlaps the next iteration") {
  OneLayer t;
  const Schedule s = serial_schedule_of(t.g);
  const SwapPlan plan = host_step_plan(t, true);
  const Program p = lower(t.g, s, plan);
  CHECK(p.delayed_host_update);
  // Eight iterations: in the first ones the host, running ahead, still pays cudaMalloc for gradient blocks the
  // copy stream holds (RecordStream), until the fake pool has cached enough of them.
  const RunResult r = run_at(t.g, p, 1e9, 8);
  REQUIRE(r.iterations_completed == 8);
  CHECK(r.steady_iteration_ns == 4100);  // the GPU's F + B + gW out; the 3 us step hides behind the next iteration
  const SwapCheck check = check_swapped_run(t.g, p, r.trace, pinned(t.g, p));
  for (const std::string& problem : check.problems) UNSCOPED_INFO(problem);
  CHECK(check.ok());
  // A CPU step longer than the GPU's work: the steps run back to back and set the pace.
  const RunResult slow = run_at(t.g, p, 0.25e9, 6);
  CHECK(slow.steady_iteration_ns == 12000);
  CHECK(check_swapped_run(t.g, p, slow.trace, pinned(t.g, p)).ok());
}

TEST_CASE("the checker catches a host step program that is wrong") {
  OneLayer t;
  const Schedule s = serial_schedule_of(t.g);
  SECTION("weights one step old without the delayed update declared") {
    Program p = lower(t.g, s, host_step_plan(t, true));
    p.delayed_host_update = false;
    const RunResult r = run_at(t.g, p, 1e9);
    const SwapCheck check = check_swapped_run(t.g, p, r.trace, pinned(t.g, p));
    REQUIRE_FALSE(check.ok());
    CHECK_THAT(check.problems.front(), Catch::Contains("'W' holding an older value"));
  }
  SECTION("a CPU step that does not wait for the gradient's copy") {
    Program p = lower(t.g, s, host_step_plan(t, false));
    auto host = std::find_if(p.iteration.begin(), p.iteration.end(), [](const Command& c) { return c.kind == CmdKind::HostCompute; });
    REQUIRE(host != p.iteration.begin());
    REQUIRE((host - 1)->kind == CmdKind::WaitEvent);
    p.iteration.erase(host - 1);
    const RunResult r = run_at(t.g, p, 1e9);
    const SwapCheck check = check_swapped_run(t.g, p, r.trace, pinned(t.g, p));
    REQUIRE_FALSE(check.ok());
    bool found = false;
    for (const std::string& problem : check.problems) found |= problem.find("started before the copy of tensor 'gW' to the host ended") != std::string::npos;
    CHECK(found);
  }
}

TEST_CASE("host step: plans that cannot run so are refused") {
  OneLayer t;
  const Schedule s = serial_schedule_of(t.g);
  SwapPlan p;
  p.host_step.ops = {t.B};
  CHECK_THROWS_WITH(lower(t.g, s, p), Catch::Contains("op 'B' is not an optimizer op"));
  p.host_step.ops = {t.O, t.O};
  CHECK_THROWS_WITH(lower(t.g, s, p), Catch::Contains("listed twice"));
  p.host_step.ops = {t.O};
  p.streams = CopyStreams::Compute;
  CHECK_THROWS_WITH(lower(t.g, s, p), Catch::Contains("dedicated copy streams"));
  // a program with a host step on a GPU without a CPU rate
  const Program prog = lower(t.g, s, host_step_plan(t, false));
  CHECK_THROWS_WITH(run_at(t.g, prog, 0), Catch::Contains("no host_cpu.adam_gb_per_s"));
}

namespace {

// F1: (x, W1) -> a   F2: (a, W2) -> y   B2: (y, a, W2) -> (ga, gW2)   B1: (ga, x, W1) -> gW1   O: Adam over both.
struct TwoLayers {
  Graph g;
  TensorId x, W1, W2, a, y, ga, gW1, gW2, m1, v1, m2, v2;
  OpId F1, F2, B2, B1, O;
  TwoLayers() {
    x = tensor(g, "x", 1000);
    W1 = tensor(g, "W1", 4000, true);
    W2 = tensor(g, "W2", 8000, true);
    a = tensor(g, "a", 1000);
    y = tensor(g, "y", 1000);
    ga = tensor(g, "ga", 1000);
    gW1 = tensor(g, "gW1", 4000);
    gW2 = tensor(g, "gW2", 8000);
    m1 = tensor(g, "W1.exp_avg", 4000, true);
    v1 = tensor(g, "W1.exp_avg_sq", 4000, true);
    m2 = tensor(g, "W2.exp_avg", 8000, true);
    v2 = tensor(g, "W2.exp_avg_sq", 8000, true);
    F1 = op(g, "F1", {x, W1}, {a}, 1000);
    F2 = op(g, "F2", {a, W2}, {y}, 1000);
    B2 = op(g, "B2", {y, a, W2}, {ga, gW2}, 2000);
    B1 = op(g, "B1", {ga, x, W1}, {gW1}, 2000);
    O = op(g, "O", {W1, gW1, m1, v1, W2, gW2, m2, v2}, {W1, m1, v1, W2, m2, v2}, 500);
    g.op(B2).phase = g.op(B1).phase = Phase::Backward;
    g.op(O).phase = Phase::Optimizer;
    g.op(O).kind = OpKind::AdamUpdate;
  }
};

}  // namespace

TEST_CASE("parameter fetches: a parameter on the device for its forward uses and again for its backward ones") {
  TwoLayers t;
  const Schedule s = serial_schedule_of(t.g);
  SwapPlan plan;
  plan.host_step.ops = {t.O};
  plan.host_step.fetch_parameters = true;
  const HostStepTensors h = host_step_tensors(t.g, s.order, plan.host_step);
  const std::vector<ParameterFetch> f = parameter_fetches(t.g, s.order, plan, h);
  REQUIRE(f.size() == 3);
  // W1 before F1 (freed after it), W2 after F1 for F2 and B2 (adjacent: one fetch), W1 again after B2 for B1
  CHECK((f[0].tensor == t.W1 && f[0].issue_after == -1 && f[0].first == 0 && f[0].last == 0));
  CHECK((f[1].tensor == t.W2 && f[1].issue_after == 0 && f[1].first == 1 && f[1].last == 2));
  CHECK((f[2].tensor == t.W1 && f[2].issue_after == 2 && f[2].first == 3 && f[2].last == 3));
  plan.host_step.prefetch_ops = 2;  // two ops ahead: W1's two ranges are now close enough to be one
  const std::vector<ParameterFetch> f1 = parameter_fetches(t.g, s.order, plan, h);
  REQUIRE(f1.size() == 2);
  CHECK((f1[0].tensor == t.W1 && f1[0].issue_after == -1 && f1[0].last == 3));
  CHECK((f1[1].tensor == t.W2 && f1[1].issue_after == -1 && f1[1].first == 1));

  plan.host_step.prefetch_ops = 0;
  const Program p = lower(t.g, s, plan);
  for (const Command& c : p.setup) CHECK(c.kind != CmdKind::Alloc);  // nothing persistent lives on the device
  const RunResult r = run_at(t.g, p, 1e9, 4);
  REQUIRE(r.iterations_completed == 4);
  // The fetch plan's promise, and the most at once by hand: during B2, W2 with what B2 reads and writes, and x
  CHECK(r.peak_live_bytes == ProgramLoad(t.g, s.order).peak_with(plan, s.stream_of));
  CHECK(r.peak_live_bytes == 8000 + 1000 + 1000 + 1000 + 1000 + 8000);  // W2, x, a, y, ga, gW2
  const SwapCheck check = check_swapped_run(t.g, p, r.trace, pinned(t.g, p));
  for (const std::string& problem : check.problems) UNSCOPED_INFO(problem);
  CHECK(check.ok());
  // Zero-offload keeps both parameters resident: W1 + W2 more at that point.
  SwapPlan zero;
  zero.host_step.ops = {t.O};
  CHECK(ProgramLoad(t.g, s.order).peak_with(zero, s.stream_of) == r.peak_live_bytes + 4000);
}

TEST_CASE("parameter fetches: each iteration fetches the weight the last CPU step wrote, at PyTorch's CPU Adam rate") {
  OneLayer t;
  t.g.op(t.B).phase = Phase::Backward;
  const Schedule s = serial_schedule_of(t.g);
  SwapPlan plan = host_step_plan(t, false);
  plan.host_step.fetch_parameters = true;
  const Program p = lower(t.g, s, plan);
  const RunResult r = run_at(t.g, p, 1e9);
  REQUIRE(r.iterations_completed == 4);
  // W in 1100 + F 1000 + B 2000 + gW out 1100 + CPU step 3000: the next fetch waits for the step
  CHECK(r.steady_iteration_ns == 8200);
  const SwapCheck check = check_swapped_run(t.g, p, r.trace, pinned(t.g, p));
  for (const std::string& problem : check.problems) UNSCOPED_INFO(problem);
  CHECK(check.ok());
  plan.host_step.cpu_rate_scale = 0.5;  // a CPU optimizer half as fast: the step takes 6000
  CHECK(run_at(t.g, lower(t.g, s, plan), 1e9).steady_iteration_ns == 8200 + 3000);
  plan.host_step.delayed_update = true;
  CHECK_THROWS_WITH(lower(t.g, s, plan), Catch::Contains("has no delayed update"));
}
