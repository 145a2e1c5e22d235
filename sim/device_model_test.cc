// The device model on its own, driven through its four calls the way the executor drives it: pop the earliest
// event, hand it back with handle(), then settle(). Expected times are worked out by hand in the comments.
#include "sim/device_model.h"

#include <catch2/catch.hpp>

#include <map>

#include "policies/testing/fakes.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// Counts the commands each iteration has seen leave their streams.
struct CountingListener : DeviceListener {
  void command_done(int iteration) override { ++done[iteration]; }
  std::map<int, int> done;
};

// A device over `g` with `streams` streams and one event, and the loop that runs it until nothing is left.
struct Bench {
  explicit Bench(const Graph& graph, int streams = 2, GpuSpec spec = fake_gpu())
      : g(graph), gpu(std::move(spec)), device(g, gpu, kernels, link, streams, 1, queue, listener, &trace) {}
  StreamCmd launch(OpId op) const { return {CmdKind::Launch, 0, op, kNoTensor, -1, 0}; }
  // Pops every event in (time, sequence) order; returns the time of the last one.
  TimeNs drain() {
    TimeNs now = 0;
    device.settle(now);
    while (!queue.empty()) {
      const Event e = queue.pop();
      REQUIRE(DeviceModel::owns(e));
      now = e.time;
      device.handle(e, now);
      device.settle(now);
    }
    return now;
  }
  const Graph& g;
  GpuSpec gpu;
  AttrKernels kernels;
  LinearLink link{1.0, 1.0, 500};
  EventQueue queue;
  CountingListener listener;
  Trace trace;
  DeviceModel device;
};

}  // namespace

TEST_CASE("device model: one stream runs its kernels in order and is idle when they are done") {
  Graph g;
  const OpId a = op(g, "a", {}, {}, 1000), b = op(g, "b", {}, {}, 500);
  Bench d(g, 1);
  CHECK(d.device.idle());
  d.device.enqueue(0, d.launch(a));
  d.device.enqueue(0, d.launch(b));
  CHECK_FALSE(d.device.idle());
  CHECK(d.drain() == 1500);  // a from 0 to 1000, then b to 1500
  CHECK(d.device.idle());
  REQUIRE(d.trace.ops.size() == 2);
  CHECK(d.trace.ops[0].op == a);
  CHECK(d.trace.ops[1].start == 1000);
  CHECK(d.listener.done[0] == 2);
}

TEST_CASE("device model: of two kernels that each fill the GPU in one wave, the later waits for the earlier") {
  Graph g;
  const OpId a = op(g, "a", {}, {}, 1000), b = op(g, "b", {}, {}, 1000);
  Bench d(g, 2);
  d.device.enqueue(0, d.launch(a));
  d.device.enqueue(1, d.launch(b));
  // The block scheduler serves the older grid first: a's blocks hold every SM until 1000, then b's run.
  CHECK(d.drain() == 2000);
  REQUIRE(d.trace.ops.size() == 2);
  CHECK(d.trace.ops[0].op == a);
  CHECK(d.trace.ops[0].end == 1000);
  CHECK(d.trace.ops[1].start == 1000);  // a kernel's record starts when its first block runs
  CHECK(d.trace.ops[1].end == 2000);
  CHECK(d.device.idle());
}

TEST_CASE("device model: a wait holds its stream until the record it waits for completes") {
  Graph g;
  const OpId a = op(g, "a", {}, {}, 1000), b = op(g, "b", {}, {}, 100);
  Bench d(g, 2);
  d.device.enqueue(0, d.launch(a));
  d.device.enqueue(0, {CmdKind::RecordEvent, 0, -1, kNoTensor, 0, 1});
  d.device.enqueue(1, {CmdKind::WaitEvent, 0, -1, kNoTensor, 0, 1});
  d.device.enqueue(1, d.launch(b));
  d.device.settle(0);
  CHECK(d.device.records_done(0) == 0);
  CHECK(d.drain() == 1100);  // b waits for a's record at 1000
  CHECK(d.device.records_done(0) == 1);
  CHECK(d.trace.ops[1].start == 1000);
  CHECK(d.listener.done[0] == 4);  // the record and the wait leave their streams too
}

TEST_CASE("device model: a copy pays its latency, then moves its bytes") {
  Graph g;
  const TensorId t = tensor(g, "t", 2000);
  Bench d(g, 1);
  d.device.enqueue(0, {CmdKind::CopyOut, 3, -1, t, -1, 0});
  CHECK(d.drain() == 2500);  // 500 ns latency + 2000 bytes at 1 byte/ns
  REQUIRE(d.trace.copies.size() == 1);
  CHECK(d.trace.copies[0].to_host);
  CHECK(d.listener.done[3] == 1);
}

// The concurrent-kernel model from first principles. fake_gpu() has 100 SMs; with one block per SM a kernel of
// B blocks runs in ceil(B / 100) waves, each its standalone time over the number of waves.
namespace {

OpId grid_op(Graph& g, const std::string& name, int64_t ns, int64_t blocks, int64_t per_sm = 1, uint64_t bytes = 0) {
  const OpId id = op(g, name, {}, {}, ns);
  Op& o = g.op(id);
  o.set_attr(Attr::blocks, blocks);
  o.set_attr(Attr::blocks_per_sm, per_sm);
  o.bytes_read = bytes;
  return id;
}

const OpRecord& record(const Trace& t, OpId id) {
  for (const auto& r : t.ops)
    if (r.op == id) return r;
  FAIL("no record of op " << id);
  return t.ops.front();
}

}  // namespace

TEST_CASE("device model: a kernel alone takes its standalone time, however many waves it has") {
  Graph g;
  // 250 blocks on 100 slots: 3 waves of 333.33 ns; rounding each wave to whole ns must not add up.
  const OpId a = grid_op(g, "a", 1000, 250), b = grid_op(g, "b", 1001, 250), c = grid_op(g, "c", 7, 1000, 3);
  Bench d(g, 1);
  for (OpId id : {a, b, c}) d.device.enqueue(0, d.launch(id));
  CHECK(d.drain() == 2008);
  CHECK(record(d.trace, a).end == 1000);
  CHECK(record(d.trace, b).end == 2001);
}

TEST_CASE("device model: two independent full-GPU kernels overlap only in their tails") {
  Graph g;
  SECTION("a partial last wave leaves slots to the next kernel") {
    // a: 150 blocks = a full wave [0, 1000) and a half wave [1000, 2000). b gets the 50 free slots at 1000, then
    // its other 100 blocks at 2000: it ends at 3000, not 4000 as on one stream, and the overlap is a's tail.
    const OpId a = grid_op(g, "a", 2000, 150), b = grid_op(g, "b", 2000, 150);
    Bench d(g, 2);
    d.device.enqueue(0, d.launch(a));
    d.device.enqueue(1, d.launch(b));
    CHECK(d.drain() == 3000);
    CHECK(record(d.trace, a).start == 0);
    CHECK(record(d.trace, a).end == 2000);
    CHECK(record(d.trace, b).start == 1000);
    CHECK(record(d.trace, b).end == 3000);
  }
  SECTION("full waves leave nothing: the second runs after the first") {
    const OpId a = grid_op(g, "a", 2000, 200), b = grid_op(g, "b", 2000, 200);
    Bench d(g, 2);
    d.device.enqueue(0, d.launch(a));
    d.device.enqueue(1, d.launch(b));
    CHECK(d.drain() == 4000);
    CHECK(record(d.trace, b).start == record(d.trace, a).end);
  }
}

TEST_CASE("device model: two small kernels run fully concurrently") {
  Graph g;
  // 30 blocks each, 2 per SM: 15 % of the slots each.
  const OpId a = grid_op(g, "a", 1000, 30, 2), b = grid_op(g, "b", 1000, 30, 2);
  Bench d(g, 2);
  d.device.enqueue(0, d.launch(a));
  d.device.enqueue(1, d.launch(b));
  d.device.settle(0);
  CHECK(d.device.sm_occupancy() == Approx(0.3));
  CHECK(d.drain() == 1000);
  CHECK(record(d.trace, a).start == 0);
  CHECK(record(d.trace, b).start == 0);
  CHECK(record(d.trace, b).end == 1000);
  CHECK(d.device.occupancy_integral(1000) == Approx(300.0));  // 0.3 of the slots for 1000 ns
  REQUIRE_FALSE(d.trace.sm_occupancy.empty());
  CHECK(d.trace.sm_occupancy.front().value == Approx(0.3));
  CHECK(d.trace.sm_occupancy.back().value == 0);
}

TEST_CASE("device model: memory-bound kernels running together share the HBM bandwidth") {
  Graph g;
  GpuSpec spec = fake_gpu();
  spec.hbm_bandwidth = 1e12;  // 1000 bytes per ns
  spec.concurrency.hbm_share_fraction = 1.0;
  SECTION("two that each need the whole bandwidth take twice as long") {
    // 1e6 bytes in 1000 ns: the full 1000 B/ns each; together each gets half: both end at 2000.
    const OpId a = grid_op(g, "a", 1000, 10, 1, 1000000), b = grid_op(g, "b", 1000, 10, 1, 1000000);
    Bench d(g, 2, spec);
    d.device.enqueue(0, d.launch(a));
    d.device.enqueue(1, d.launch(b));
    CHECK(d.drain() == 2000);
    CHECK(record(d.trace, a).end == 2000);
  }
  SECTION("two that need a quarter each are not slowed") {
    const OpId a = grid_op(g, "a", 1000, 10, 1, 250000), b = grid_op(g, "b", 1000, 10, 1, 250000);
    Bench d(g, 2, spec);
    d.device.enqueue(0, d.launch(a));
    d.device.enqueue(1, d.launch(b));
    CHECK(d.drain() == 1000);
  }
  SECTION("a compute-bound kernel beside a memory-bound one is hardly slowed") {
    // Demand 1.1 x the bandwidth: the memory-bound kernel (m = 1) runs at 1 / 1.1, the one that moves a tenth
    // of the bandwidth at 1 / (1 + 0.1 x 0.1).
    const OpId a = grid_op(g, "a", 1000, 10, 1, 1000000), b = grid_op(g, "b", 1000, 10, 1, 100000);
    Bench d(g, 2, spec);
    d.device.enqueue(0, d.launch(a));
    d.device.enqueue(1, d.launch(b));
    d.drain();
    CHECK(record(d.trace, b).end == 1010);
    // a: 1010 / 1.1 = 918.2 ns of progress by 1010, then alone at full speed: ends at 1010 + 81.8 -> 1092.
    CHECK(record(d.trace, a).end == 1092);
  }
}

TEST_CASE("device model: each co-resident kernel slows the others by co_run_slowdown") {
  Graph g;
  GpuSpec spec = fake_gpu();
  SECTION("equal kernels slow each other in full") {
    spec.concurrency.co_run_slowdown = 0.25;
    const OpId a = grid_op(g, "a", 1000, 10), b = grid_op(g, "b", 1000, 10), c = grid_op(g, "c", 1000, 10);
    Bench d(g, 3, spec);
    for (int s = 0; s < 3; ++s) d.device.enqueue(s, d.launch(s == 0 ? a : s == 1 ? b : c));
    CHECK(d.drain() == 1500);  // three together: each at 1 / (1 + 2 x 0.25)
  }
  SECTION("a smaller kernel slows a bigger one in proportion to its share") {
    spec.concurrency.co_run_slowdown = 0.5;
    const OpId big = grid_op(g, "big", 1000, 90), small = grid_op(g, "small", 1000, 10);
    Bench d(g, 2, spec);
    d.device.enqueue(0, d.launch(big));
    d.device.enqueue(1, d.launch(small));
    d.drain();
    // big: 1 / (1 + 0.5 x 10/90), ends at 1055.6 -> 1056; small: 1 / 1.5 until then (704 ns done), then alone.
    CHECK(record(d.trace, big).end == 1056);
    CHECK(record(d.trace, small).end == 1352);
  }
}

TEST_CASE("device model: a copy moving data slows the kernels beside it by copy_slowdown, per direction busy") {
  Graph g;
  GpuSpec spec = fake_gpu();
  const OpId k = grid_op(g, "k", 1000, 100);
  const TensorId out = tensor(g, "out", 300), in = tensor(g, "in", 300);
  SECTION("without a copy slowdown a copy does not touch the kernel") {
    Bench d(g, 3, spec);
    d.device.enqueue(0, d.launch(k));
    d.device.enqueue(1, {CmdKind::CopyOut, 0, -1, out, -1, 0});
    d.drain();
    CHECK(record(d.trace, k).end == 1000);
  }
  SECTION("one direction busy") {
    spec.concurrency.copy_slowdown = 0.25;
    Bench d(g, 3, spec);
    d.device.enqueue(0, d.launch(k));
    d.device.enqueue(1, {CmdKind::CopyOut, 0, -1, out, -1, 0});
    d.drain();
    // The copy pays its 500 ns latency, then moves its 300 bytes from 500 to 800: the kernel runs alone to 500
    // (500 ns done), at 1 / 1.25 to 800 (240 more), and the last 260 alone: it ends at 1060. The copy itself is
    // not slowed.
    CHECK(record(d.trace, k).end == 1060);
    REQUIRE(d.trace.copies.size() == 1);
    CHECK(d.trace.copies[0].end == 800);
  }
  SECTION("both directions busy count twice") {
    spec.concurrency.copy_slowdown = 0.25;
    Bench d(g, 3, spec);
    d.device.enqueue(0, d.launch(k));
    d.device.enqueue(1, {CmdKind::CopyOut, 0, -1, out, -1, 0});
    d.device.enqueue(2, {CmdKind::CopyIn, 0, -1, in, -1, 0});
    d.drain();
    // Both copies move data from 500 to 800 on their own engines: the kernel at 1 / 1.5 does 200 ns of work
    // there, 500 before and the last 300 after: it ends at 1100.
    CHECK(record(d.trace, k).end == 1100);
  }
}

TEST_CASE("device model: nine streams over eight connections show the false dependency") {
  Graph g;
  std::vector<OpId> k;
  for (int s = 0; s < 9; ++s) k.push_back(grid_op(g, "k" + std::to_string(s), 1000, 10));
  auto run = [&](int connections) {
    GpuSpec spec = fake_gpu();
    spec.concurrency.max_connections = connections;
    Bench d(g, 9, spec);
    for (int s = 0; s < 9; ++s) d.device.enqueue(s, d.launch(k[static_cast<size_t>(s)]));
    const TimeNs end = d.drain();
    return std::make_pair(end, d.trace);
  };
  SECTION("eight connections: stream 8 shares stream 0's and waits for its kernel") {
    auto [end, trace] = run(8);
    CHECK(end == 2000);
    for (int s = 0; s < 8; ++s) CHECK(record(trace, k[static_cast<size_t>(s)]).start == 0);
    CHECK(record(trace, k[8]).start == 1000);  // 90 % of the slots were free: only the queue held it
  }
  SECTION("sixteen connections: all nine run at once") {
    auto [end, trace] = run(16);
    CHECK(end == 1000);
    CHECK(record(trace, k[8]).start == 0);
  }
}

TEST_CASE("device model: freed slots go to the higher-priority stream first, then to the older kernel") {
  Graph g;
  // `big` fills the GPU until 1000. `low` (stream 1) arrives before `high` (stream 2); each wants 80 slots.
  const OpId big = grid_op(g, "big", 1000, 100), low = grid_op(g, "low", 1000, 80), high = grid_op(g, "high", 1000, 80);
  auto run = [&](std::vector<int> priorities) {
    Graph& gr = g;
    GpuSpec spec = fake_gpu();
    AttrKernels kernels;
    LinearLink link{1.0, 1.0, 500};
    EventQueue queue;
    CountingListener listener;
    Trace trace;
    DeviceModel device(gr, spec, kernels, link, 3, 0, queue, listener, &trace, priorities);
    device.enqueue(0, {CmdKind::Launch, 0, big, kNoTensor, -1, 0});
    device.settle(0);
    device.enqueue(1, {CmdKind::Launch, 0, low, kNoTensor, -1, 0});
    device.settle(0);
    device.enqueue(2, {CmdKind::Launch, 0, high, kNoTensor, -1, 0});
    device.settle(0);
    while (!queue.empty()) {
      const Event e = queue.pop();
      device.handle(e, e.time);
      device.settle(e.time);
    }
    return trace;
  };
  SECTION("equal priorities: arrival order") {
    const Trace t = run({});
    CHECK(record(t, low).start == 1000);
    CHECK(record(t, high).start == 1000);  // 20 of its 80 blocks fit beside low's
    CHECK(record(t, high).end == 3000);
  }
  SECTION("stream 2 has the higher priority (the lower number)") {
    const Trace t = run({0, 0, -1});
    CHECK(record(t, high).start == 1000);
    CHECK(record(t, high).end == 2000);
    CHECK(record(t, low).end == 3000);
  }
}

TEST_CASE("device model: a kernel arriving while another runs wave after wave gets slots at the next wave's end") {
  Graph g;
  // a: 450 blocks on 100 slots, 5 waves of 1000 ns (the last half full), alone: scheduled as one run of waves.
  const OpId a = grid_op(g, "a", 5000, 450), b = grid_op(g, "b", 100, 10);
  auto run = [&](std::vector<int> priorities) {
    GpuSpec spec = fake_gpu();
    AttrKernels kernels;
    LinearLink link{1.0, 1.0, 500};
    EventQueue queue;
    CountingListener listener;
    Trace trace;
    DeviceModel device(g, spec, kernels, link, 2, 0, queue, listener, &trace, priorities);
    device.enqueue(0, {CmdKind::Launch, 0, a, kNoTensor, -1, 0});
    device.settle(0);
    device.enqueue(1, {CmdKind::Launch, 0, b, kNoTensor, -1, 0});  // at 1500, in a's second wave
    device.settle(1500);
    while (!queue.empty()) {
      const Event e = queue.pop();
      device.handle(e, e.time);
      device.settle(e.time);
    }
    return trace;
  };
  SECTION("equal priority: a is older and takes every full wave; b runs beside a's half-full last wave") {
    const Trace t = run({});
    CHECK(record(t, b).start == 4000);
    CHECK(record(t, b).end == 4100);
    CHECK(record(t, a).end == 5000);
  }
  SECTION("b has the higher priority: it runs at the end of a's second wave") {
    const Trace t = run({1, 0});
    CHECK(record(t, b).start == 2000);
    CHECK(record(t, b).end == 2100);
    // a runs 90 blocks from 2000 and 10 more from 2100; its 250 blocks left then go 100 per 1000 ns in waves
    // that are no longer aligned, and the slack of its half-full last wave absorbs b's 100 ns: still 5000.
    CHECK(record(t, a).end == 5000);
  }
}
