#include "program/trace.h"

#include <catch2/catch.hpp>

#include <map>

#include "policies/pool/virtual_device_memory.h"
#include "sim/executor.h"
#include "program/lower.h"
#include "policies/testing/fakes.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

Trace sample() {
  Trace t;
  t.backend = "sim";
  t.device = "fake";
  t.iterations = {{0, 5000}, {4000, 9000}};
  t.ops = {{0, 1, 0, 100, 1100}, {1, 2, 1, 4100, 9000}};
  t.mem = {{-1, 0, MemAction::Alloc, 0, 512, 4096, 1u << 21}, {2, 9500, MemAction::Free, 0, 512, 4096, 0}};
  t.copies = {{0, 3, true, 1000000, 200, 101200}};
  t.oom = true;
  t.oom_where = "iteration 1, alloc of tensor 'a' (614400 bytes) on stream 0";
  return t;
}

// A graph, schedule and program with two streams, a swap and a workspace: most of what a trace can hold.
struct Example {
  Graph g;
  Schedule s;
  Program p;
  Example() {
    const TensorId w = tensor(g, "w", 4096, true), x = tensor(g, "x", 1000), a = tensor(g, "a", 200000);
    const TensorId b = tensor(g, "b", 1000), c = tensor(g, "c", 1000), ws = tensor(g, "ws", 4096);
    op(g, "conv", {x, w}, {a}, 3000, 1000, ws);
    op(g, "left", {a}, {b}, 2000, 700);
    op(g, "mid", {b}, {c}, 5000, 600);
    op(g, "right", {c, a}, {}, 1000, 800);
    s.order = {0, 1, 2, 3};
    s.stream_of = {0, 1, 1, 0};
    s.num_streams = 2;
    SwapPlan plan;
    plan.actions.push_back({a, 1, 1, 3});
    p = lower(g, s, plan);
  }
};

std::string run_json(const Example& e) {
  VirtualDeviceMemory dev(1 << 30);
  ExactCachePool pool(dev);
  AttrKernels k;
  LinearLink l(50.0, 40.0, 300);
  GpuSpec gpu = fake_gpu();
  gpu.launch_overhead_ns = 150;
  SimContext ctx{e.g, gpu, k, l, pool, dev};
  SimOptions opt;
  opt.iterations = 3;
  return to_json(simulate(e.p, ctx, opt).trace).dump();
}

}  // namespace

TEST_CASE("a trace survives a JSON round trip") {
  const Trace t = sample();
  const nlohmann::json j = to_json(t);
  const Trace back = trace_from_json(nlohmann::json::parse(j.dump()));
  CHECK(to_json(back) == j);
  CHECK(back.ops.at(1).stream == 1);
  CHECK(back.mem.at(1).action == MemAction::Free);
  CHECK(back.copies.at(0).to_host);
  CHECK(back.oom_where == t.oom_where);
}

TEST_CASE("reading a trace names the missing or mistyped field") {
  nlohmann::json j = to_json(sample());
  SECTION("missing") {
    j["ops"][1].erase("start");
    CHECK_THROWS_WITH(trace_from_json(j), "trace JSON: missing field 'ops[1].start'");
  }
  SECTION("top level") {
    j.erase("device");
    CHECK_THROWS_WITH(trace_from_json(j), "trace JSON: missing field 'device'");
  }
  SECTION("wrong type") {
    j["mem"][0]["bytes"] = "many";
    CHECK_THROWS_WITH(trace_from_json(j), "trace JSON: field 'mem[0].bytes' must be a non-negative integer");
  }
  SECTION("bad action") {
    j["mem"][0]["action"] = "steal";
    CHECK_THROWS_WITH(trace_from_json(j), Catch::Contains("mem[0].action"));
  }
}

TEST_CASE("the Chrome trace has a track per stream and a slice per kernel and copy") {
  Example e;
  VirtualDeviceMemory dev(1 << 30);
  ExactCachePool pool(dev);
  AttrKernels k;
  LinearLink l(50.0, 40.0, 300);
  GpuSpec gpu = fake_gpu();
  SimContext ctx{e.g, gpu, k, l, pool, dev};
  const RunResult r = simulate(e.p, ctx, SimOptions{});
  const nlohmann::json c = to_chrome_trace(r.trace, e.g);
  int slices = 0, copies = 0, tracks = 0, host = 0;
  bool named = false;
  for (const auto& ev : c["traceEvents"]) {
    if (ev["ph"] == "X" && ev.value("cat", "") == "copy") ++copies;
    else if (ev["ph"] == "X" && ev.value("cat", "") == "host") ++host;
    else if (ev["ph"] == "X" && ev.value("cat", "") != "iteration") ++slices;
    if (ev["ph"] == "M" && ev["name"] == "thread_name") ++tracks;
    if (ev["ph"] == "X" && ev["name"] == "conv") named = ev["ts"] == r.trace.ops.at(0).start / 1000.0;
  }
  CHECK(slices == 4);
  CHECK(copies == 2);
  CHECK(host == 4);    // the host's issue of each kernel launch
  CHECK(tracks == 5);  // streams 0 and 1, the two copy directions, and the host
  CHECK(named);
}

TEST_CASE("the same inputs give a byte-identical trace") {
  Example a, b;
  const std::string first = run_json(a);
  CHECK(first == run_json(b));
  CHECK(first.find("\"copies\":[{") != std::string::npos);  // the run did swap
}

TEST_CASE("the Chrome trace shows kernels of two streams overlapping and an SM occupancy counter") {
  Graph g;
  op(g, "left", {}, {}, 1000, 300);
  op(g, "right", {}, {}, 1000, 300);
  Program p;
  p.num_streams = 2;
  p.num_compute_streams = 2;
  p.iteration = {{CmdKind::Launch, 0, 0, kNoTensor, -1}, {CmdKind::Launch, 1, 1, kNoTensor, -1}};
  VirtualDeviceMemory dev(1 << 30);
  ExactCachePool pool(dev);
  AttrKernels k;
  LinearLink l(50.0, 40.0, 300);
  GpuSpec gpu = fake_gpu();
  SimContext ctx{g, gpu, k, l, pool, dev};
  const RunResult r = simulate(p, ctx, SimOptions{});
  const nlohmann::json c = to_chrome_trace(r.trace, g);
  std::map<int, std::pair<double, double>> slice;  // by stream: [ts, ts + dur)
  double peak = 0;
  int counters = 0;
  for (const auto& ev : c["traceEvents"]) {
    if (ev["ph"] == "X" && ev.value("cat", "") != "iteration" && ev.value("cat", "") != "host")
      slice[ev["tid"].get<int>()] = {ev["ts"].get<double>(), ev["ts"].get<double>() + ev["dur"].get<double>()};
    if (ev["ph"] == "C" && ev["name"] == "SM occupancy") {
      ++counters;
      peak = std::max(peak, ev["args"]["occupancy"].get<double>());
    }
  }
  REQUIRE(slice.size() == 2);
  CHECK(slice[0].first < slice[1].second);  // each starts before the other ends
  CHECK(slice[1].first < slice[0].second);
  CHECK(counters >= 2);                     // up when they start, down to 0 when they end
  CHECK(peak == Approx(0.6));               // 30 + 30 of the 100 SMs
  CHECK(r.steady_sm_occupancy == Approx(0.6).epsilon(0.01));
}
