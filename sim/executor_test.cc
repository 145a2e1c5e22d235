#include "sim/executor.h"

#include <catch2/catch.hpp>

#include "policies/pool/virtual_device_memory.h"
#include "policies/testing/fakes.h"
#include "sim/testing/commands.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

using dlsim::testing::cmd;
using dlsim::testing::event;
using dlsim::testing::launch;


// Runs `p` on `g` with the given spec and pool type; keeps everything alive for the checks.
template <class Pool>
struct Run {
  Run(const Graph& g, const Program& p, GpuSpec spec, int iterations = 1, uint64_t capacity = uint64_t{1} << 30,
      LinearLink link = LinearLink(1.0, 1.0, 500))
      : dev(capacity), pool(dev), gpu(std::move(spec)), link_(link) {
    SimContext ctx{g, gpu, kernels, link_, pool, dev};
    SimOptions opt;
    opt.iterations = iterations;
    r = simulate(p, ctx, opt);
  }
  const OpRecord& op(OpId id, int iteration = 0) const {
    for (const auto& o : r.trace.ops)
      if (o.op == id && o.iteration == iteration) return o;
    FAIL("no record of op " << id << " in iteration " << iteration);
    return r.trace.ops.front();
  }
  const CopyRecord& copy(TensorId t) const {
    for (const auto& c : r.trace.copies)
      if (c.tensor == t) return c;
    FAIL("no copy of tensor " << t);
    return r.trace.copies.front();
  }
  VirtualDeviceMemory dev;
  Pool pool;
  GpuSpec gpu;
  AttrKernels kernels;
  LinearLink link_;
  RunResult r;
};

}  // namespace

TEST_CASE("a stream runs its kernels in FIFO order after the host's launch overhead") {
  Graph g;
  const OpId k0 = op(g, "k0", {}, {}, 1000);
  const OpId k1 = op(g, "k1", {}, {}, 1000);
  Program p;
  p.iteration = {launch(k0), launch(k1)};
  GpuSpec spec = fake_gpu();
  spec.launch_overhead_ns = 100;
  Run<DirectPool> run(g, p, spec);
  CHECK(run.op(k0).start == 100);  // joins the stream when the launch call returns
  CHECK(run.op(k0).end == 1100);
  CHECK(run.op(k1).start == 1100);  // launched at 200, waits for k0
  CHECK(run.op(k1).end == 2100);
  CHECK(run.r.iteration_ns == std::vector<TimeNs>{2100});
}

TEST_CASE("a launch into a full launch queue blocks the host until the stream's oldest command is done") {
  Graph g;
  std::vector<OpId> k;
  for (int i = 0; i < 5; ++i) k.push_back(op(g, "k" + std::to_string(i), {}, {}, 1000));
  const TensorId x = tensor(g, "x", 1000);
  Program p;
  for (OpId o : k) p.iteration.push_back(launch(o));
  p.iteration.push_back(cmd(CmdKind::Alloc, x));
  p.iteration.push_back(cmd(CmdKind::Free, x));
  GpuSpec spec = fake_gpu();
  spec.malloc_base_ns = 0;
  spec.concurrency.launch_queue_depth = 2;  // k0 running and k1 queued fill it: k2 waits for k0's end
  Run<DirectPool> bounded(g, p, spec);
  for (int i = 0; i < 5; ++i) CHECK(bounded.op(k[static_cast<size_t>(i)]).start == 1000 * i);  // the GPU never idles
  CHECK(bounded.r.trace.mem.at(0).time == 3000);  // the host issued k4 when k2 ended, then allocated
  spec.concurrency.launch_queue_depth = 0;        // unbounded: the host is done issuing at once
  Run<DirectPool> free_running(g, p, spec);
  CHECK(free_running.r.trace.mem.at(0).time == 0);
  CHECK(free_running.r.iteration_ns == bounded.r.iteration_ns);
}

TEST_CASE("kernels on two streams share the SMs block by block, the older grid first") {
  auto two = [](int64_t sm0, int64_t sm1) {
    Graph g;
    op(g, "k0", {}, {}, 1000, sm0);
    op(g, "k1", {}, {}, 1000, sm1);
    Program p;
    p.num_streams = 2;
    p.num_compute_streams = 2;
    p.iteration = {launch(0, 0), launch(1, 1)};
    Run<DirectPool> run(g, p, fake_gpu());
    return std::make_pair(run.op(0), run.op(1));
  };
  SECTION("both fill the GPU: the second runs when the first's blocks are done") {
    auto [a, b] = two(1000, 1000);
    CHECK(a.start == 0);
    CHECK(a.end == 1000);
    CHECK(b.start == 1000);
    CHECK(b.end == 2000);
  }
  SECTION("grids that fit together run at full speed") {
    auto [a, b] = two(500, 500);
    CHECK(a.end == 1000);
    CHECK(b.end == 1000);
  }
  SECTION("a small grid first: the big one runs the blocks that fit beside it, the rest as a second wave") {
    auto [a, b] = two(250, 1000);
    CHECK(a.end == 1000);  // 25 blocks on 25 SMs
    CHECK(b.start == 0);   // 75 of its 100 blocks at once
    CHECK(b.end == 2000);  // the other 25 when a's SMs free up: a block takes its whole wave's time
  }
}

TEST_CASE("launch: cuda-graph pays one graph launch per iteration and a small cost per kernel") {
  Graph g;
  const OpId k0 = op(g, "k0", {}, {}, 1000, 100);
  const OpId k1 = op(g, "k1", {}, {}, 1000, 100);
  Program p;
  p.num_streams = 2;
  p.num_compute_streams = 2;
  p.iteration = {launch(k0, 0), launch(k1, 1)};
  GpuSpec spec = fake_gpu();
  spec.launch_overhead_ns = 5000;  // eager: the host, not the GPU, decides: k1 starts 5 us after k0
  spec.concurrency.graph_launch_ns = 3000;
  spec.concurrency.graph_node_ns = 100;
  auto run = [&](LaunchMode mode) {
    VirtualDeviceMemory dev(uint64_t{1} << 30);
    DirectPool pool(dev);
    AttrKernels kernels;
    LinearLink link(1.0, 1.0, 500);
    SimContext ctx{g, spec, kernels, link, pool, dev};
    SimOptions opt;
    opt.iterations = 2;
    opt.launch = mode;
    return simulate(p, ctx, opt);
  };
  const RunResult eager = run(LaunchMode::Eager);
  // Eager: k0 runs 5000-6000, k1 10000-11000 (no overlap); the second iteration likewise after the first.
  CHECK(eager.iteration_ns == std::vector<TimeNs>{11000, 10000});
  const RunResult graph = run(LaunchMode::CudaGraph);
  // Graph: 3000 for the launch, then k0 joins at 3100 and k1 at 3200: they run side by side (10 % of the SMs
  // each) until 4100 and 4200.
  CHECK(graph.iteration_ns.front() == 4200);
  CHECK(graph.trace.ops[0].start == 3100);
  CHECK(graph.trace.ops[1].start == 3200);
  CHECK(graph.steady_sm_occupancy > 0);
  CHECK(graph.steady_sm_occupancy < 0.2);
}

TEST_CASE("stream priorities must name every stream") {
  Graph g;
  op(g, "k0", {}, {}, 1000);
  Program p;
  p.num_streams = 2;
  p.stream_priority = {0};
  p.iteration = {launch(0, 0)};
  VirtualDeviceMemory dev(uint64_t{1} << 30);
  DirectPool pool(dev);
  AttrKernels kernels;
  LinearLink link(1.0, 1.0, 500);
  GpuSpec spec = fake_gpu();
  SimContext ctx{g, spec, kernels, link, pool, dev};
  CHECK_THROWS_WITH(simulate(p, ctx, SimOptions{}), Catch::Contains("stream_priority has 1 entries for 2 streams"));
}

TEST_CASE("a stream waits for an event recorded on another stream") {
  Graph g;
  const OpId k0 = op(g, "k0", {}, {}, 1000, 500);
  const OpId k1 = op(g, "k1", {}, {}, 1000, 500);
  Program p;
  p.num_streams = 2;
  p.num_events = 1;
  SECTION("with the wait") {
    p.iteration = {launch(k0, 0), event(CmdKind::RecordEvent, 0, 0), event(CmdKind::WaitEvent, 0, 1), launch(k1, 1)};
    Run<DirectPool> run(g, p, fake_gpu());
    CHECK(run.op(k1).start == 1000);
    CHECK(run.op(k1).end == 2000);
  }
  SECTION("without it the kernels overlap") {
    p.iteration = {launch(k0, 0), launch(k1, 1)};
    Run<DirectPool> run(g, p, fake_gpu());
    CHECK(run.op(k1).start == 0);
  }
  SECTION("a wait for an event never recorded does not wait (as in CUDA)") {
    p.iteration = {launch(k0, 0), event(CmdKind::WaitEvent, 0, 1), launch(k1, 1)};
    Run<DirectPool> run(g, p, fake_gpu());
    CHECK(run.op(k1).start == 0);
  }
  SECTION("SyncEvent blocks the host until the record completes") {
    p.iteration = {launch(k0, 0), event(CmdKind::RecordEvent, 0, 0), event(CmdKind::SyncEvent, 0), launch(k1, 1)};
    Run<DirectPool> run(g, p, fake_gpu());
    CHECK(run.op(k1).start == 1000);
  }
}

TEST_CASE("cudaMalloc blocks the host and cudaFree synchronizes the device first") {
  Graph g;
  const TensorId t = tensor(g, "t", 4096);
  const OpId k0 = op(g, "k0", {}, {t}, 1000);
  const OpId k1 = op(g, "k1", {}, {}, 1000);
  Program p;
  p.iteration = {cmd(CmdKind::Alloc, t), launch(k0), cmd(CmdKind::Free, t), launch(k1)};
  SECTION("no pool: every call goes to the device") {
    Run<DirectPool> run(g, p, fake_gpu());  // malloc 10 us, free 3 us
    CHECK(run.op(k0).start == 10000);
    CHECK(run.op(k0).end == 11000);
    CHECK(run.op(k1).start == 14000);  // the free waited for k0 (11000), then cost 3000
    CHECK(run.r.allocator_ns == std::vector<TimeNs>{14000});
    CHECK(run.r.device_malloc_calls == 1);
    CHECK(run.r.device_free_calls == 1);
  }
  SECTION("a caching pool pays once; hits and frees cost nothing") {
    Run<ExactCachePool> run(g, p, fake_gpu(), 2);
    CHECK(run.op(k0, 0).start == 10000);
    CHECK(run.op(k1, 0).start == 11000);  // the free did not block the host: k1 follows k0 in the FIFO
    CHECK(run.op(k0, 1).start == 12000);
    CHECK(run.op(k1, 1).end == 14000);
    CHECK(run.r.allocator_ns == std::vector<TimeNs>{10000, 0});
    CHECK(run.r.iteration_ns == std::vector<TimeNs>{12000, 2000});
    CHECK(run.r.steady_iteration_ns == 2000);
    CHECK(run.r.device_malloc_calls == 1);
    CHECK(run.r.device_free_calls == 0);
    CHECK(run.r.peak_live_bytes == 4096);
  }
  SECTION("cudaFree waits for every stream, not just the tensor's") {
    Graph g2;
    const TensorId u = tensor(g2, "u", 4096);
    op(g2, "short", {}, {u}, 1000, 900);  // leaves 10 SMs: `long` runs beside it
    op(g2, "long", {}, {}, 5000, 100);
    op(g2, "after", {}, {}, 1000);
    Program q;
    q.num_streams = 2;
    q.iteration = {cmd(CmdKind::Alloc, u), launch(0, 0), launch(1, 1), cmd(CmdKind::Free, u), launch(2, 0)};
    Run<DirectPool> run(g2, q, fake_gpu());
    CHECK(run.op(1).end == 15000);    // started at 10000 beside `short`
    CHECK(run.op(2).start == 18000);  // 15000 + the free's 3000
  }
  SECTION("mapping a page costs like cudaMalloc, unmapping synchronizes like cudaFree") {
    GpuSpec spec = fake_gpu();
    Graph gm;
    const TensorId m = tensor(gm, "m", uint64_t{2} << 20);  // one 2 MiB page
    op(gm, "k0", {}, {m}, 1000);
    op(gm, "k1", {}, {}, 1000);
    Program q;
    q.iteration = {cmd(CmdKind::Alloc, m), launch(0), cmd(CmdKind::Free, m), launch(1)};
    Run<MappingPool> run(gm, q, spec);
    CHECK(run.op(0).start == 10000);  // the map cost cudaMalloc's 10 us
    CHECK(run.op(1).start == 14000);  // the unmap waited for k0 (11000), then cost cudaFree's 3 us
    CHECK(run.r.allocator_ns == std::vector<TimeNs>{14000});
  }
  SECTION("cudaMalloc's cost grows with the size") {
    GpuSpec spec = fake_gpu();
    spec.malloc_base_ns = 0;
    spec.malloc_ns_per_gib = 1e6;
    Graph big;
    const TensorId b = tensor(big, "b", uint64_t{1} << 29);  // 0.5 GiB
    op(big, "k", {}, {b}, 1000);
    Program q;
    q.iteration = {cmd(CmdKind::Alloc, b), launch(0)};
    Run<ExactCachePool> run(big, q, spec);
    CHECK(run.op(0).start == 500000);
  }
}

TEST_CASE("copies take latency plus bytes over bandwidth, and share their direction") {
  Graph g;
  const TensorId a = tensor(g, "a", 1000, true);
  const TensorId b = tensor(g, "b", 1000, true);
  Program p;
  p.num_streams = 3;
  p.setup = {cmd(CmdKind::Alloc, a), cmd(CmdKind::Alloc, b)};
  GpuSpec spec = fake_gpu();
  spec.malloc_base_ns = 0;
  SECTION("alone") {
    p.iteration = {cmd(CmdKind::CopyOut, a, 1)};
    Run<DirectPool> run(g, p, spec);
    CHECK(run.copy(a).start == 0);
    CHECK(run.copy(a).end == 1500);  // 500 latency + 1000 B at 1 B/ns
    CHECK(run.copy(a).to_host);
  }
  SECTION("two in the same direction share its bandwidth") {
    p.iteration = {cmd(CmdKind::CopyOut, a, 1), cmd(CmdKind::CopyOut, b, 2)};
    Run<DirectPool> run(g, p, spec);
    CHECK(run.copy(a).end == 2500);
    CHECK(run.copy(b).end == 2500);
  }
  SECTION("opposite directions are independent with two copy engines") {
    p.iteration = {cmd(CmdKind::CopyOut, a, 1), cmd(CmdKind::CopyIn, b, 2)};
    Run<DirectPool> run(g, p, spec);
    CHECK(run.copy(a).end == 1500);
    CHECK(run.copy(b).end == 1500);
    CHECK_FALSE(run.copy(b).to_host);
  }
  SECTION("with one copy engine they are served one after the other") {
    spec.copy_engines = 1;
    p.iteration = {cmd(CmdKind::CopyOut, a, 1), cmd(CmdKind::CopyIn, b, 2)};
    Run<DirectPool> run(g, p, spec);
    CHECK(run.copy(a).end == 1500);
    CHECK(run.copy(b).end == 2500);
  }
  SECTION("a copy on a stream follows the stream's kernel") {
    op(g, "k", {a}, {}, 700);
    p.iteration = {launch(0, 1), cmd(CmdKind::CopyOut, a, 1)};
    Run<DirectPool> run(g, p, spec);
    CHECK(run.copy(a).start == 700);
    CHECK(run.copy(a).end == 2200);
  }
}

TEST_CASE("out of memory stops the run and says where") {
  Graph g;
  const TensorId w = tensor(g, "w", 300 * 1024, true);
  const TensorId a = tensor(g, "a", 600 * 1024);
  const OpId k = op(g, "k", {w}, {a}, 1000);
  Program p;
  p.setup = {cmd(CmdKind::Alloc, w)};
  p.iteration = {cmd(CmdKind::Alloc, a), launch(k), cmd(CmdKind::Free, a)};
  p.teardown = {cmd(CmdKind::Free, w)};
  Run<LeakyPool> run(g, p, fake_gpu(), 3, 1024 * 1024);  // the leak fills 1 MiB in the second iteration
  CHECK(run.r.trace.oom);
  CHECK(run.r.trace.oom_where == "iteration 1, alloc of tensor 'a' (614400 bytes) on stream 0");
  CHECK(run.r.iterations_completed == 1);  // the first iteration's kernel, already queued, completed
  CHECK(run.r.trace.ops.size() == 1);
  CHECK(run.r.trace.iterations.size() == 1);
  CHECK(run.pool.iteration_ends == std::vector<int>{0});
}

TEST_CASE("iterations run back to back and the pool hears of each begin and end") {
  Graph g;
  const OpId k0 = op(g, "k0", {}, {}, 1000);
  const OpId k1 = op(g, "k1", {}, {}, 1000);
  Program p;
  p.iteration = {launch(k0), launch(k1)};
  GpuSpec spec = fake_gpu();
  spec.launch_overhead_ns = 100;
  Run<ExactCachePool> run(g, p, spec, 3);
  CHECK(run.r.iterations_completed == 3);
  CHECK(run.r.iteration_ns == std::vector<TimeNs>{2100, 2000, 2000});
  CHECK(run.r.steady_iteration_ns == 2000);
  CHECK(run.op(k0, 2).start == 4100);
  CHECK(run.r.trace.iterations[1].start == 200);  // the host ran ahead: it issued iteration 1 at 200
  CHECK(run.r.trace.iterations[1].end == 4100);
  CHECK(run.pool.iteration_begins == std::vector<int>{0, 1, 2});
  CHECK(run.pool.iteration_ends == std::vector<int>{0, 1, 2});
  CHECK(run.r.total_ns == 6100);
  CHECK(run.r.events_processed > 0);
}

TEST_CASE("a malformed program is an error naming the command") {
  Graph g;
  const TensorId t = tensor(g, "t", 64);
  op(g, "k", {t}, {}, 1000);
  Program p;
  SECTION("launch of an op whose tensor is not allocated") {
    p.iteration = {launch(0)};
    VirtualDeviceMemory dev(1 << 20);
    DirectPool pool(dev);
    AttrKernels k;
    LinearLink l(1, 1, 0);
    GpuSpec gpu = fake_gpu();
    SimContext ctx{g, gpu, k, l, pool, dev};
    CHECK_THROWS_WITH(simulate(p, ctx, SimOptions{}),
                      "program iteration command 0: launch of op 'k' uses tensor 't', which is not allocated");
  }
  SECTION("free of a tensor that is not allocated, stream out of range") {
    VirtualDeviceMemory dev(1 << 20);
    DirectPool pool(dev);
    AttrKernels k;
    LinearLink l(1, 1, 0);
    GpuSpec gpu = fake_gpu();
    SimContext ctx{g, gpu, k, l, pool, dev};
    p.iteration = {cmd(CmdKind::Free, t)};
    CHECK_THROWS_WITH(simulate(p, ctx, SimOptions{}), Catch::Contains("free of tensor 't', which is not allocated"));
    p.iteration = {launch(0, 3)};
    CHECK_THROWS_WITH(simulate(p, ctx, SimOptions{}), Catch::Contains("stream 3 out of range"));
  }
}
