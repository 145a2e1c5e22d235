// The executor's memory across streams (sim/executor.h): frees held for other streams (RecordStream), the
// retry after waiting for them, and the wait a stream-blind pool's cross-stream reuse needs. Every run is also
// read by the independent check (sim/check/memory_reuse_check.h).
#include <catch2/catch.hpp>

#include "policies/pool/virtual_device_memory.h"
#include "common/byte_units.h"
#include "sim/executor.h"
#include "sim/check/memory_reuse_check.h"
#include "policies/testing/fakes.h"
#include "sim/testing/commands.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

using dlsim::testing::cmd;
using dlsim::testing::event;
using dlsim::testing::launch;



struct Result {
  RunResult r;
  std::vector<std::string> problems;
  const MemRecord& mem(TensorId t, MemAction a) const {
    for (const MemRecord& m : r.trace.mem)
      if (m.tensor == t && m.action == a && m.iteration == 0) return m;
    FAIL("no memory record of tensor " << t);
    return r.trace.mem.front();
  }
  const OpRecord& op(OpId id) const {
    for (const OpRecord& o : r.trace.ops)
      if (o.op == id && o.iteration == 0) return o;
    FAIL("no record of op " << id);
    return r.trace.ops.front();
  }
};

// ExactCachePool hands a freed block to the next request of its size, whatever the stream: the stream-blind
// pool that makes every hazard below visible.
// `host_ns`: what issuing each launch costs the host (eager: launch_overhead_ns; a graph: graph_node_ns).
Result run(const Graph& g, const Program& p, uint64_t capacity = 64 * kMiB, SimOptions options = SimOptions{},
           TimeNs host_ns = 0) {
  VirtualDeviceMemory dev(capacity);
  ExactCachePool pool(dev);
  GpuSpec gpu = fake_gpu();
  gpu.launch_overhead_ns = host_ns;
  if (host_ns > 0) gpu.concurrency.graph_node_ns = host_ns;
  AttrKernels kernels;
  LinearLink link(1.0, 1.0, 500);
  SimContext ctx{g, gpu, kernels, link, pool, dev};
  Result out;
  out.r = simulate(p, ctx, options);
  out.problems = check_memory_reuse(g, p, out.r.trace);
  return out;
}

// a (1 MiB) is written on stream 0 and read by a long kernel on stream 1; the host frees it at once and
// allocates b (1 MiB) for a short kernel on stream 0.
struct SideRead {
  Graph g;
  TensorId a, b;
  OpId write_a, read_a, write_b;
  SideRead() {
    a = tensor(g, "a", kMiB);
    b = tensor(g, "b", kMiB);
    write_a = op(g, "write_a", {}, {a}, 1000, 10);
    read_a = op(g, "read_a", {a}, {}, 10000, 10);
    write_b = op(g, "write_b", {}, {b}, 1000, 10);
  }
  Program program(bool record_stream) const {
    Program p;
    p.num_streams = p.num_compute_streams = 2;
    p.num_events = 1;
    p.iteration = {cmd(CmdKind::Alloc, a, 0), launch(write_a, 0), event(CmdKind::RecordEvent, 0, 0),
                   event(CmdKind::WaitEvent, 0, 1), launch(read_a, 1)};
    if (record_stream) p.iteration.push_back(cmd(CmdKind::RecordStream, a, 1));
    p.iteration.push_back(cmd(CmdKind::Free, a, 0));
    p.iteration.push_back(cmd(CmdKind::Alloc, b, 0));
    p.iteration.push_back(launch(write_b, 0));
    p.iteration.push_back(cmd(CmdKind::Free, b, 0));
    return p;
  }
};

}  // namespace

TEST_CASE("a free named for another stream is held until that stream is past it") {
  SideRead s;
  const Result held = run(s.g, s.program(true));
  CHECK(held.problems.empty());
  // a is still being read on stream 1 when b is allocated: b gets fresh memory and runs beside the read.
  CHECK(held.mem(s.b, MemAction::Alloc).address != held.mem(s.a, MemAction::Alloc).address);
  CHECK(held.op(s.write_b).start < held.op(s.read_a).end);
  CHECK(held.r.iteration_ns.size() == 1);

  // Without RecordStream the free is stream-ordered on stream 0 only: the pool hands a's memory to b while
  // stream 1 still reads it. The independent check sees the race.
  const Result racy = run(s.g, s.program(false));
  CHECK(racy.mem(s.b, MemAction::Alloc).address == racy.mem(s.a, MemAction::Alloc).address);
  REQUIRE(racy.problems.size() == 1);
  CHECK(racy.problems[0].find("tensor 'b' reuses the memory of tensor 'a'") != std::string::npos);
}

TEST_CASE("held memory returns to the pool at the first allocation after its streams are past it") {
  SideRead s;
  Program p = s.program(true);
  // The host waits for stream 1 (an event after the read) before allocating b: a's memory is back by then.
  p.num_events = 2;
  auto at = std::find_if(p.iteration.begin(), p.iteration.end(),
                         [&](const Command& c) { return c.kind == CmdKind::Alloc && c.tensor == s.b; });
  p.iteration.insert(at, {event(CmdKind::RecordEvent, 1, 1), event(CmdKind::SyncEvent, 1, 1)});
  const Result r = run(s.g, p);
  CHECK(r.problems.empty());
  CHECK(r.mem(s.b, MemAction::Alloc).address == r.mem(s.a, MemAction::Alloc).address);
  CHECK(r.op(s.write_b).start >= r.op(s.read_a).end);
}

TEST_CASE("an allocation refused while memory is held waits for the holding streams and tries again") {
  SideRead s;
  // Room for a and b together would be 2 MiB: with 1.5 MiB, b fits only in a's memory, once stream 1 is done.
  const Result r = run(s.g, s.program(true), 3 * kMiB / 2);
  CHECK_FALSE(r.r.trace.oom);
  CHECK(r.problems.empty());
  CHECK(r.mem(s.b, MemAction::Alloc).address == r.mem(s.a, MemAction::Alloc).address);
  CHECK(r.mem(s.b, MemAction::Alloc).time == r.op(s.read_a).end);  // the host waited for the read to end
  CHECK(r.op(s.write_b).start >= r.op(s.read_a).end);
  // Time inside the allocator: a's cudaMalloc, then the wait.
  CHECK(r.r.allocator_ns.at(0) == fake_gpu().malloc_base_ns + (r.op(s.read_a).end - r.mem(s.a, MemAction::Free).time));

  // With nothing held the same refusal is out of memory at once.
  Graph g;
  const TensorId x = tensor(g, "x", kMiB), y = tensor(g, "y", kMiB);
  op(g, "use_x", {x}, {}, 1000);
  Program p;
  p.num_streams = p.num_compute_streams = 2;
  p.iteration = {cmd(CmdKind::Alloc, x, 0), launch(0, 0), cmd(CmdKind::Alloc, y, 1)};
  const Result oom = run(g, p, 3 * kMiB / 2);
  CHECK(oom.r.trace.oom);
  CHECK(oom.r.trace.oom_where.find("alloc of tensor 'y'") != std::string::npos);
}

TEST_CASE("under launch: cuda-graph a hold lasts until the iteration's end as a captured free's events do") {
  SideRead s;
  const OpId pad = op(s.g, "pad", {}, {}, 1000, 10);
  Program p = s.program(true);
  // A launch between a's free and b's allocation: the host, at 20 us a launch, is slower than the device, so the
  // read of a on stream 1 (10 us) is over when b is allocated.
  auto at = std::find_if(p.iteration.begin(), p.iteration.end(),
                         [&](const Command& c) { return c.kind == CmdKind::Alloc && c.tensor == s.b; });
  p.iteration.insert(at, launch(pad, 0));
  SimOptions eager;
  eager.iterations = 2;
  SimOptions graph = eager;
  graph.launch = LaunchMode::CudaGraph;

  // Eagerly the hold ends at b's allocation (process_events): b takes a's memory.
  const Result e = run(s.g, p, 64 * kMiB, eager, 20000);
  CHECK(e.problems.empty());
  CHECK(e.mem(s.b, MemAction::Alloc).address == e.mem(s.a, MemAction::Alloc).address);
  CHECK(e.r.peak_reserved_bytes == kMiB);

  // Captured, the hold's events cannot be queried: b takes fresh memory although stream 1 is long past a...
  const Result g = run(s.g, p, 64 * kMiB, graph, 20000);
  CHECK(g.problems.empty());
  CHECK(g.op(s.read_a).end < g.mem(s.b, MemAction::Alloc).time);
  CHECK(g.mem(s.b, MemAction::Alloc).address != g.mem(s.a, MemAction::Alloc).address);
  // ...and the hold ends with the iteration: the second iteration finds both blocks cached and maps nothing more.
  CHECK(g.r.iterations_completed == 2);
  CHECK(g.r.peak_reserved_bytes == 2 * kMiB);
  CHECK(g.r.device_malloc_calls == 2);
  int second = 0;
  for (const MemRecord& m : g.r.trace.mem)
    if (m.iteration == 1 && m.action == MemAction::Alloc) {
      ++second;
      CHECK(m.reserved_after == 2 * kMiB);
    }
  CHECK(second == 2);

  // An allocation refused during the capture cannot wait for a captured hold (PyTorch cannot synchronize on its
  // events either): out of memory, where eagerly the host waits for stream 1 and retries.
  const Result oom = run(s.g, p, 3 * kMiB / 2, graph, 20000);
  CHECK(oom.r.trace.oom);
  CHECK(oom.r.trace.oom_where.find("iteration 0, alloc of tensor 'b'") != std::string::npos);
  CHECK_FALSE(run(s.g, p, 3 * kMiB / 2, eager, 20000).r.trace.oom);
}

TEST_CASE("memory a stream-blind pool moves to another stream is used only after the old owner's free") {
  Graph g;
  const TensorId a = tensor(g, "a", kMiB), b = tensor(g, "b", kMiB);
  const OpId use_a = op(g, "use_a", {a}, {}, 10000, 10);
  const OpId use_b = op(g, "use_b", {}, {b}, 1000, 10);
  Program p;
  p.num_streams = p.num_compute_streams = 2;
  p.iteration = {cmd(CmdKind::Alloc, a, 0), launch(use_a, 0), cmd(CmdKind::Free, a, 0),
                 cmd(CmdKind::Alloc, b, 1), launch(use_b, 1), cmd(CmdKind::Free, b, 1)};
  const Result r = run(g, p);
  CHECK(r.mem(b, MemAction::Alloc).address == r.mem(a, MemAction::Alloc).address);  // the pool reused it
  CHECK(r.op(use_b).start == r.op(use_a).end);  // stream 1 waited for stream 0 to pass the free
  CHECK(r.problems.empty());
  CHECK(r.r.iteration_ns.at(0) == r.op(use_b).end);

  // On one stream nothing waits: the stream's own order is enough.
  p.num_streams = p.num_compute_streams = 1;
  for (Command& c : p.iteration) c.stream = 0;
  const Result one = run(g, p);
  CHECK(one.op(use_b).start == one.op(use_a).end);
  CHECK(one.problems.empty());
}

TEST_CASE("record_stream of a tensor that is not allocated is an error naming it") {
  SideRead s;
  Program p;
  p.num_streams = p.num_compute_streams = 2;
  p.iteration = {cmd(CmdKind::RecordStream, s.a, 1)};
  VirtualDeviceMemory dev(64 * kMiB);
  ExactCachePool pool(dev);
  GpuSpec gpu = fake_gpu();
  AttrKernels kernels;
  LinearLink link(1.0, 1.0, 500);
  SimContext ctx{s.g, gpu, kernels, link, pool, dev};
  CHECK_THROWS_WITH(simulate(p, ctx, SimOptions{}), Catch::Contains("record_stream of tensor 'a', which is not allocated"));
}
