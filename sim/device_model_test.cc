// The device model on its own, driven through its four calls the way the executor drives it: pop the earliest
// event, hand it back with handle(), then settle(). Expected times are worked out by hand in the comments.
#include "sim/device_model.h"

#include <catch2/catch.hpp>

#include <map>

#include "sim/testing/fakes.h"

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

TEST_CASE("device model: two kernels that each fill the GPU share it, and a stale completion is ignored") {
  Graph g;
  const OpId a = op(g, "a", {}, {}, 1000), b = op(g, "b", {}, {}, 1000);
  Bench d(g, 2);
  d.device.enqueue(0, d.launch(a));
  d.device.enqueue(1, d.launch(b));
  // Each gets half the SMs: both end at 2000. a's first completion event (keyed at 1000 when it ran alone) goes
  // stale when b joins; handing it back changes nothing.
  CHECK(d.drain() == 2000);
  REQUIRE(d.trace.ops.size() == 2);
  CHECK(d.trace.ops[0].end == 2000);
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
