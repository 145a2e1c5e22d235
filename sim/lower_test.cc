#include "program/lower.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <set>

#include "policies/pool/virtual_device_memory.h"
#include "sim/executor.h"
#include "sim/check/memory_reuse_check.h"
#include "policies/testing/fakes.h"
#include "workloads/zoo.h"
#include "policies/concurrency/concurrency_policy.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// Walks the iteration as a host would and checks the lowering's invariants: every tensor an op or copy touches
// is allocated at that point, nothing is allocated twice or freed when dead, every non-persistent tensor
// allocated in the iteration is freed by its end, and persistent tensors are allocated only in setup and
// freed only in teardown.
void check_liveness(const Graph& g, const Program& p) {
  std::vector<bool> live(g.tensors().size(), false);
  for (const Command& c : p.setup) {
    REQUIRE(c.kind == CmdKind::Alloc);
    REQUIRE(g.tensor(c.tensor).persistent);
    live[static_cast<size_t>(c.tensor)] = true;
  }
  for (const Tensor& t : g.tensors()) CHECK(live[static_cast<size_t>(t.id)] == t.persistent);
  for (size_t i = 0; i < p.iteration.size(); ++i) {
    const Command& c = p.iteration[i];
    INFO("iteration command " << i << " " << to_string(c.kind));
    if (c.kind == CmdKind::Launch) {
      const Op& op = g.op(c.op);
      for (TensorId t : op.inputs) CHECK(live[static_cast<size_t>(t)]);
      for (TensorId t : op.outputs) CHECK(live[static_cast<size_t>(t)]);
      // A 0-byte workspace (an algorithm that needs none) is never allocated.
      if (op.workspace != kNoTensor && g.tensor(op.workspace).bytes > 0) CHECK(live[static_cast<size_t>(op.workspace)]);
    } else if (c.kind == CmdKind::Alloc) {
      CHECK_FALSE(live[static_cast<size_t>(c.tensor)]);
      live[static_cast<size_t>(c.tensor)] = true;
    } else if (c.kind == CmdKind::Free) {
      CHECK(live[static_cast<size_t>(c.tensor)]);
      live[static_cast<size_t>(c.tensor)] = false;
    } else if (c.kind == CmdKind::CopyIn || c.kind == CmdKind::CopyOut) {
      CHECK(live[static_cast<size_t>(c.tensor)]);
    }
  }
  for (const Tensor& t : g.tensors()) CHECK(live[static_cast<size_t>(t.id)] == t.persistent);
  for (const Command& c : p.teardown) {
    REQUIRE(c.kind == CmdKind::Free);
    CHECK(g.tensor(c.tensor).persistent);
  }
  CHECK(p.teardown.size() == p.setup.size());
}

// For every DAG edge u -> v across streams: before v's launch, v's stream waits for an event whose latest
// record is on u's stream at or after u's launch.
void check_cross_stream_waits(const Graph& g, const Schedule& s, const Program& p) {
  std::vector<size_t> launch_at(g.ops().size());
  for (size_t i = 0; i < p.iteration.size(); ++i)
    if (p.iteration[i].kind == CmdKind::Launch) launch_at[static_cast<size_t>(p.iteration[i].op)] = i;
  const Graph::Dag dag = g.dag();
  int checked = 0;
  for (auto [e, end] = boost::edges(dag); e != end; ++e) {
    const auto u = static_cast<OpId>(boost::source(*e, dag)), v = static_cast<OpId>(boost::target(*e, dag));
    const int su = s.stream_of[static_cast<size_t>(u)], sv = s.stream_of[static_cast<size_t>(v)];
    if (su == sv) continue;
    ++checked;
    bool covered = false;
    for (size_t i = launch_at[static_cast<size_t>(u)]; i < launch_at[static_cast<size_t>(v)] && !covered; ++i) {
      const Command& w = p.iteration[i];
      if (w.kind != CmdKind::WaitEvent || w.stream != sv) continue;
      for (size_t j = i; j-- > 0;) {  // the record this wait refers to: the latest one before it
        const Command& r = p.iteration[j];
        if (r.kind == CmdKind::RecordEvent && r.event == w.event) {
          covered = r.stream == su && j > launch_at[static_cast<size_t>(u)];
          break;
        }
      }
    }
    INFO("edge " << g.op(u).name << " -> " << g.op(v).name);
    CHECK(covered);
  }
  CHECK(checked > 0);
}

// x (input) -> c0 [s0] -> a;  a -> c1 [s1] -> b;  a -> c2 [s0] -> c;  (b, c) -> c3 [s0] -> d.  w is a weight.
struct Diamond {
  Graph g;
  TensorId w, x, a, b, c, d, ws;
  Diamond() {
    w = tensor(g, "w", 4096, true);
    x = tensor(g, "x", 1024);
    a = tensor(g, "a", 2048);
    b = tensor(g, "b", 2048);
    c = tensor(g, "c", 2048);
    d = tensor(g, "d", 64);
    ws = tensor(g, "ws", 512);
    op(g, "c0", {x, w}, {a}, 1000, 1000, ws);
    op(g, "c1", {a}, {b}, 1000, 500);
    op(g, "c2", {a}, {c}, 1000, 500);
    op(g, "c3", {b, c}, {d}, 1000);
  }
};

size_t index_of(const Program& p, CmdKind k, int32_t op_or_tensor) {
  for (size_t i = 0; i < p.iteration.size(); ++i) {
    const Command& c = p.iteration[i];
    if (c.kind == k && (k == CmdKind::Launch ? c.op : c.tensor) == op_or_tensor) return i;
  }
  FAIL("no " << to_string(k) << " of " << op_or_tensor);
  return 0;
}

}  // namespace

TEST_CASE("lowering on one stream: allocs before first use, frees after last, persistent in setup/teardown") {
  Diamond m;
  const Program p = lower(m.g, serial_schedule_of(m.g), SwapPlan{});
  check_liveness(m.g, p);
  CHECK(p.num_streams == 1);
  CHECK(p.num_events == 0);
  REQUIRE(p.setup.size() == 1);
  CHECK(p.setup[0].tensor == m.w);
  // the input batch is an ordinary tensor: allocated right before its first use
  CHECK(index_of(p, CmdKind::Alloc, m.x) < index_of(p, CmdKind::Launch, 0));
  CHECK(index_of(p, CmdKind::Free, m.x) > index_of(p, CmdKind::Launch, 0));
  // the workspace brackets its op
  CHECK(index_of(p, CmdKind::Alloc, m.ws) + 1 == index_of(p, CmdKind::Launch, 0));
  CHECK(index_of(p, CmdKind::Free, m.ws) == index_of(p, CmdKind::Launch, 0) + 1);
  // a is read last by c2 (position 2)
  CHECK(index_of(p, CmdKind::Free, m.a) > index_of(p, CmdKind::Launch, 2));
  CHECK(index_of(p, CmdKind::Free, m.a) < index_of(p, CmdKind::Launch, 3));
  for (const Command& c : p.iteration) CHECK(c.kind != CmdKind::WaitEvent);
}

TEST_CASE("lowering on two streams inserts an event for every cross-stream dependence") {
  Diamond m;
  Schedule s = serial_schedule_of(m.g);
  s.num_streams = 2;
  s.stream_of = {0, 1, 0, 0};
  const Program p = lower(m.g, s, SwapPlan{});
  check_liveness(m.g, p);
  check_cross_stream_waits(m.g, s, p);
  CHECK(p.num_streams == 2);
  CHECK(p.num_events > 0);
  // a is allocated on stream 0 and read on stream 1: its free names stream 1 (RecordStream) and is issued on
  // stream 0, which does not wait for c1 for it (the executor holds the memory instead)
  const size_t free_a = index_of(p, CmdKind::Free, m.a);
  CHECK(p.iteration[free_a].stream == 0);
  REQUIRE(free_a > 0);
  CHECK(p.iteration[free_a - 1].kind == CmdKind::RecordStream);
  CHECK(p.iteration[free_a - 1].tensor == m.a);
  CHECK(p.iteration[free_a - 1].stream == 1);
  bool waited = false;
  for (size_t i = index_of(p, CmdKind::Launch, 1); i < free_a; ++i)
    waited |= p.iteration[i].kind == CmdKind::WaitEvent && p.iteration[i].stream == 0;
  CHECK_FALSE(waited);
  for (const Command& c : p.iteration)  // only for tensors another stream used: a, and b (made on 1, read on 0)
    if (c.kind == CmdKind::RecordStream) CHECK((c.tensor == m.a || c.tensor == m.b));
  // every event that is waited for is recorded, and nothing is recorded in vain
  std::set<int32_t> recorded, waited_for;
  for (const Command& c : p.iteration) {
    if (c.kind == CmdKind::RecordEvent) recorded.insert(c.event);
    if (c.kind == CmdKind::WaitEvent) waited_for.insert(c.event);
  }
  CHECK(recorded == waited_for);
  CHECK(static_cast<int>(recorded.size()) == p.num_events);

  SECTION("and the executor runs c1 beside c2") {
    VirtualDeviceMemory dev(1 << 20);
    ExactCachePool pool(dev);
    AttrKernels k;
    LinearLink l(1, 1, 0);
    GpuSpec gpu = fake_gpu();
    gpu.malloc_base_ns = 0;
    SimContext ctx{m.g, gpu, k, l, pool, dev};
    SimOptions opt;
    opt.iterations = 2;
    const RunResult r = simulate(p, ctx, opt);
    REQUIRE(r.iterations_completed == 2);
    auto rec = [&](OpId id, int it) {
      for (const auto& o : r.trace.ops)
        if (o.op == id && o.iteration == it) return o;
      return OpRecord{};
    };
    CHECK(rec(1, 0).start == 1000);  // after c0
    CHECK(rec(2, 0).start == 1000);  // beside c1 (each takes half the SMs)
    CHECK(rec(1, 0).end == 2000);
    CHECK(rec(3, 0).start == 2000);
    CHECK(rec(0, 1).start == 3000);  // the next iteration starts after the join
  }
}

TEST_CASE("lowering rejects schedules that do not fit the graph") {
  Diamond m;
  Schedule s = serial_schedule_of(m.g);
  s.order = {0, 1, 2};
  CHECK_THROWS_WITH(lower(m.g, s, SwapPlan{}), Catch::Contains("schedule order has 3 ops, the graph 4"));
  s = serial_schedule_of(m.g);
  s.order = {0, 1, 1, 3};
  CHECK_THROWS_WITH(lower(m.g, s, SwapPlan{}), Catch::Contains("lists op 'c1' twice"));
  s = serial_schedule_of(m.g);
  s.stream_of[2] = 1;
  CHECK_THROWS_WITH(lower(m.g, s, SwapPlan{}), Catch::Contains("op 'c2' is on stream 1"));
  s = serial_schedule_of(m.g);
  s.num_streams = 2;
  s.stream_of = {0, 1, 0, 0};
  s.order = {1, 0, 2, 3};
  CHECK_THROWS_WITH(lower(m.g, s, SwapPlan{}), Catch::Contains("not topological"));
}

TEST_CASE("a swap plan lowers to copy-out, free, alloc, copy-in and waits") {
  Chain m;
  SwapPlan plan;
  plan.actions.push_back({m.big, 1, 4, 5});
  const Program p = lower(m.g, serial_schedule_of(m.g), plan);
  check_liveness(m.g, p);
  CHECK(p.num_streams == 3);
  CHECK(p.num_compute_streams == 1);
  const size_t out = index_of(p, CmdKind::CopyOut, m.big);
  CHECK(p.iteration[out].stream == 1);  // the D2H copy stream
  CHECK(out > index_of(p, CmdKind::Launch, 1));
  const size_t in = index_of(p, CmdKind::CopyIn, m.big);
  CHECK(p.iteration[in].stream == 2);  // the H2D copy stream
  CHECK(in > index_of(p, CmdKind::Launch, 4));
  // freed right after the next launch on its stream (f2), behind a wait for the copy-out
  size_t first_free = p.iteration.size();
  for (size_t i = 0; i < p.iteration.size(); ++i)
    if (p.iteration[i].kind == CmdKind::Free && p.iteration[i].tensor == m.big) {
      first_free = i;
      break;
    }
  CHECK(first_free > index_of(p, CmdKind::Launch, 2));
  CHECK(first_free < index_of(p, CmdKind::Launch, 3));
  CHECK(p.iteration[first_free - 1].kind == CmdKind::WaitEvent);
  CHECK(p.iteration[first_free - 1].stream == 0);

  VirtualDeviceMemory dev(1 << 30);
  ExactCachePool pool(dev);
  AttrKernels k;
  LinearLink l(10.0, 10.0, 1000);  // 1 MB in 100 us + 1 us
  GpuSpec gpu = fake_gpu();
  gpu.malloc_base_ns = 0;
  SimContext ctx{m.g, gpu, k, l, pool, dev};
  const RunResult with = simulate(p, ctx, SimOptions{});
  REQUIRE(with.iterations_completed == 1);
  REQUIRE(with.trace.copies.size() == 2);
  const CopyRecord& co = with.trace.copies.at(0);
  const CopyRecord& ci = with.trace.copies.at(1);
  auto rec = [&](OpId id) {
    for (const auto& o : with.trace.ops)
      if (o.op == id) return o;
    return OpRecord{};
  };
  CHECK(co.to_host);
  CHECK(co.start == 1000);  // after f0 wrote it, beside f1 that reads it
  CHECK(co.end == 1000 + 101000);
  CHECK(rec(3).start == co.end);  // the stream waited for the copy before reusing the memory (after f2)
  CHECK_FALSE(ci.to_host);
  CHECK(ci.start == rec(4).end);  // its memory may be what f4's stream freed: after f4
  CHECK(ci.end == ci.start + 101000);
  CHECK(rec(5).start == ci.end);

  VirtualDeviceMemory dev2(1 << 30);
  ExactCachePool pool2(dev2);
  SimContext ctx2{m.g, gpu, k, l, pool2, dev2};
  const RunResult without = simulate(lower(m.g, serial_schedule_of(m.g), SwapPlan{}), ctx2, SimOptions{});
  CHECK(without.peak_live_bytes == 2001000);  // big, tmp and s3 at f4
  CHECK(with.peak_live_bytes == 1002000);     // big, s1 and s2 at f2; s3, big and y at f5
}

TEST_CASE("a copy-out of a tensor nothing wrote waits for its allocation, not only for its writers") {
  // x and lab are graph inputs (no op writes them). x dies at f0, a long kernel; lab, first used at f1, gets x's
  // memory back in stream order on stream 0 while f0 still reads it. The D2H stream must not copy lab out
  // before f0 is done (simulation fuzzer, seed 4755014), yet may overlap f1.
  Graph g;
  const TensorId x = tensor(g, "x", 1000), lab = tensor(g, "lab", 1000), h = tensor(g, "h", 1000),
                 s = tensor(g, "s", 1000), t = tensor(g, "t", 1000), y = tensor(g, "y", 1000);
  op(g, "f0", {x}, {h}, 50000);
  op(g, "f1", {h, lab}, {s}, 50000);
  op(g, "f2", {s}, {t}, 1000);
  op(g, "f3", {t, lab}, {y}, 1000);
  SwapPlan plan;
  plan.actions.push_back({lab, 1, 2, 3});
  const Program p = lower(g, serial_schedule_of(g), plan);
  check_liveness(g, p);

  VirtualDeviceMemory dev(1 << 30);
  ExactCachePool pool(dev);
  AttrKernels k;
  LinearLink l(10.0, 10.0, 1000);
  GpuSpec gpu = fake_gpu();
  gpu.malloc_base_ns = 0;
  SimContext ctx{g, gpu, k, l, pool, dev};
  SimOptions opt;
  opt.record_trace = true;
  const RunResult r = simulate(p, ctx, opt);
  REQUIRE(r.iterations_completed == 1);
  uint64_t x_at = 0, lab_at = 1;
  for (const MemRecord& m : r.trace.mem)
    if (m.action == MemAction::Alloc && m.tensor == x) x_at = m.address;
    else if (m.action == MemAction::Alloc && m.tensor == lab && lab_at == 1) lab_at = m.address;
  REQUIRE(lab_at == x_at);  // the hazard is there: lab reuses x's memory
  OpRecord f0, f1;
  for (const OpRecord& o : r.trace.ops) {
    if (o.op == 0) f0 = o;
    if (o.op == 1) f1 = o;
  }
  REQUIRE(!r.trace.copies.empty());
  const CopyRecord& co = r.trace.copies.front();
  REQUIRE(co.to_host);
  CHECK(co.start >= f0.end);
  CHECK(co.start < f1.end);  // ordered after the allocation, not after f1 that reads it
  CHECK(check_memory_reuse(g, p, r.trace).empty());
}

TEST_CASE("swapping beside two streams: every stream that touches a copied-in tensor waits for the copy") {
  // big is swapped out after f1 and back for f5 (stream 0); g on stream 1 also reads it after f5. g must wait
  // for the copy-in too, not only f5. A swapped weight w, used on stream 1, is allocated in the setup on the
  // stream its round trip leaves it on (stream 1), so that every iteration starts as the previous one ended.
  Chain m;
  const TensorId w = tensor(m.g, "w", 4096, true), z = tensor(m.g, "z", 1000);
  op(m.g, "g", {m.big, w}, {z}, 1000);  // op 6
  Schedule s = serial_schedule_of(m.g);
  s.num_streams = 2;
  s.stream_of[6] = 1;
  SwapPlan plan;
  plan.actions.push_back({m.big, 1, 4, 5});
  plan.actions.push_back({w, 0, 4, 6});
  const Program p = lower(m.g, s, plan);
  check_liveness(m.g, p);
  const size_t copy_in = index_of(p, CmdKind::CopyIn, m.big);
  const int32_t done = p.iteration[copy_in + 1].event;  // recorded right after the copy
  REQUIRE(p.iteration[copy_in + 1].kind == CmdKind::RecordEvent);
  bool waited = false;
  for (size_t i = copy_in; i < index_of(p, CmdKind::Launch, 6); ++i)
    waited |= p.iteration[i].kind == CmdKind::WaitEvent && p.iteration[i].stream == 1 && p.iteration[i].event == done;
  CHECK(waited);
  for (const Command& c : p.setup)
    if (c.tensor == w) CHECK(c.stream == 1);
  for (const Command& c : p.teardown)
    if (c.tensor == w) CHECK(c.stream == 1);

  VirtualDeviceMemory dev(1 << 30);
  ExactCachePool pool(dev);
  AttrKernels k;
  LinearLink l(10.0, 10.0, 1000);
  GpuSpec gpu = fake_gpu();
  SimContext ctx{m.g, gpu, k, l, pool, dev};
  SimOptions opt;
  opt.iterations = 2;
  opt.record_trace = true;
  const RunResult r = simulate(p, ctx, opt);
  REQUIRE(r.iterations_completed == 2);
  CHECK(check_memory_reuse(m.g, p, r.trace).empty());
  TimeNs in_end = 0, g_start = 0;
  for (const CopyRecord& c : r.trace.copies)
    if (c.iteration == 1 && c.tensor == m.big && !c.to_host) in_end = c.end;
  for (const OpRecord& o : r.trace.ops)
    if (o.iteration == 1 && o.op == 6) g_start = o.start;
  CHECK(g_start >= in_end);
}

TEST_CASE("lowering rejects swap actions that do not fit") {
  Chain m;
  SwapPlan plan;
  plan.actions.push_back({m.big, 0, 1, 5});  // f1 reads big while it would be on the host
  CHECK_THROWS_WITH(lower(m.g, serial_schedule_of(m.g), plan), Catch::Contains("op 'f1' at position 1 uses it"));
  plan.actions = {{m.big, 2, 1, 5}};
  CHECK_THROWS_WITH(lower(m.g, serial_schedule_of(m.g), plan), Catch::Contains("out_after <= in_issue_after"));
  plan.actions = {{m.s1, 1, 1, 3}};  // s1 dies at f2
  CHECK_THROWS_WITH(lower(m.g, serial_schedule_of(m.g), plan), Catch::Contains("not live"));
  plan.actions = {{m.big, 1, 4, 5}, {m.big, 1, 2, 3}};
  CHECK_THROWS_WITH(lower(m.g, serial_schedule_of(m.g), plan), Catch::Contains("overlap"));
}

TEST_CASE("a swap action with its own free point frees there, behind a wait for the copy-out") {
  Chain m;
  SwapPlan plan;
  SwapAction a{m.big, 1, 4, 5};
  a.free_after = 3;  // after f3, where the stream must wait for the copy
  plan.actions.push_back(a);
  const Program p = lower(m.g, serial_schedule_of(m.g), plan);
  check_liveness(m.g, p);
  const size_t free_big = [&] {
    for (size_t i = 0; i < p.iteration.size(); ++i)
      if (p.iteration[i].kind == CmdKind::Free && p.iteration[i].tensor == m.big) return i;
    return p.iteration.size();
  }();
  CHECK(free_big > index_of(p, CmdKind::Launch, 3));
  CHECK(free_big < index_of(p, CmdKind::Launch, 4));
  CHECK(p.iteration[free_big - 1].kind == CmdKind::WaitEvent);
  a.free_after = 0;  // before the copy-out is issued
  plan.actions = {a};
  CHECK_THROWS_WITH(lower(m.g, serial_schedule_of(m.g), plan), Catch::Contains("free_after 0 must be -1 or within"));
}

TEST_CASE("copies on the compute stream, the host waiting for each copy-out, and a drop without a copy") {
  // save_on_cpu's shape: big is packed after f1 (host waits), dropped after f1 with no second copy, and
  // unpacked on the compute stream right before f5.
  Chain m;
  SwapPlan plan;
  plan.streams = CopyStreams::Compute;
  plan.host_waits_for_copy_out = true;
  plan.copies.push_back({m.big, 1, true});
  SwapAction a{m.big, 1, 4, 5};
  a.free_after = 1;
  a.copy_out = false;
  plan.actions.push_back(a);
  const Program p = lower(m.g, serial_schedule_of(m.g), plan);
  check_liveness(m.g, p);
  CHECK(p.num_streams == 1);  // no copy streams
  const size_t out = index_of(p, CmdKind::CopyOut, m.big);
  CHECK(out > index_of(p, CmdKind::Launch, 1));
  CHECK(p.iteration[out].stream == 0);
  CHECK(p.iteration[out + 1].kind == CmdKind::RecordEvent);
  CHECK(p.iteration[out + 2].kind == CmdKind::SyncEvent);
  CHECK(std::count_if(p.iteration.begin(), p.iteration.end(), [](const Command& c) { return c.kind == CmdKind::CopyOut; }) == 1);
  const size_t in = index_of(p, CmdKind::CopyIn, m.big);
  CHECK(p.iteration[in].stream == 0);
  CHECK(in > index_of(p, CmdKind::Launch, 4));
  CHECK(in < index_of(p, CmdKind::Launch, 5));

  VirtualDeviceMemory dev(1 << 30);
  ExactCachePool pool(dev);
  AttrKernels k;
  LinearLink l(10.0, 10.0, 1000);  // 1 MB in 100 us + 1 us
  GpuSpec gpu = fake_gpu();
  gpu.malloc_base_ns = 0;
  gpu.launch_overhead_ns = 500;
  SimContext ctx{m.g, gpu, k, l, pool, dev};
  const RunResult r = simulate(p, ctx, SimOptions{});
  REQUIRE(r.trace.copies.size() == 2);
  auto rec = [&](OpId id) {
    for (const auto& o : r.trace.ops)
      if (o.op == id) return o;
    return OpRecord{};
  };
  // in line: the copy follows f1 on the stream; the host, blocked until it ends, then pays f2's launch
  CHECK(r.trace.copies[0].start == rec(1).end);
  CHECK(rec(2).start == r.trace.copies[0].end + 500);
  CHECK(r.trace.copies[1].start >= rec(4).end);
  CHECK(rec(5).start == r.trace.copies[1].end);
  CHECK(r.peak_live_bytes == 1002000);
}

TEST_CASE("lowering rejects a drop without a current host copy and an extra copy of a tensor on the host") {
  Chain m;
  SwapPlan plan;
  SwapAction a{m.big, 1, 4, 5};
  a.copy_out = false;
  plan.actions = {a};
  CHECK_THROWS_WITH(lower(m.g, serial_schedule_of(m.g), plan), Catch::Contains("no earlier copy put the tensor on the host"));
  plan.copies = {{m.big, 0, true}};  // copied after f0, which wrote it: current
  CHECK_NOTHROW(lower(m.g, serial_schedule_of(m.g), plan));
  plan.copies = {{m.big, 1, true}, {m.big, 3, true}};  // big is on the host at f3
  CHECK_THROWS_WITH(lower(m.g, serial_schedule_of(m.g), plan), Catch::Contains("(tensor 'big'): the tensor is on the host at position 3"));
  plan.actions = {{m.y, 5, 5, 5}};
  plan.copies.clear();
  CHECK_THROWS_WITH(lower(m.g, serial_schedule_of(m.g), plan), Catch::Contains("in_issue_after < in_needed_by"));
}

TEST_CASE("lowering a zoo training graph on two streams keeps every invariant and runs") {
  ModelOptions mo;
  mo.batch = 2;
  const Graph g = build_training_graph("resnet18", mo);
  Schedule s = serial_schedule_of(g);
  s.num_streams = 2;
  for (size_t i = 0; i < s.stream_of.size(); ++i) s.stream_of[i] = static_cast<int>(i % 2);  // worst case: every edge crosses
  const Program p = lower(g, s, SwapPlan{});
  check_liveness(g, p);
  check_cross_stream_waits(g, s, p);

  VirtualDeviceMemory dev(uint64_t{1} << 34);
  ExactCachePool pool(dev);
  AttrKernels k;
  LinearLink l(10.0, 10.0, 1000);
  GpuSpec gpu = fake_gpu();
  SimContext ctx{g, gpu, k, l, pool, dev};
  SimOptions opt;
  opt.iterations = 2;
  const RunResult r = simulate(p, ctx, opt);
  CHECK(r.iterations_completed == 2);
  CHECK(r.trace.ops.size() == 2 * g.ops().size());
  // every op starts after each of its DAG predecessors ended, in both iterations
  std::vector<std::vector<OpRecord>> rec(2, std::vector<OpRecord>(g.ops().size()));
  for (const auto& o : r.trace.ops) rec[static_cast<size_t>(o.iteration)][static_cast<size_t>(o.op)] = o;
  const Graph::Dag dag = g.dag();
  for (int it = 0; it < 2; ++it)
    for (auto [e, end] = boost::edges(dag); e != end; ++e)
      REQUIRE(rec[it][boost::target(*e, dag)].start >= rec[it][boost::source(*e, dag)].end);
  // and the next iteration starts after the last one ended everywhere
  TimeNs last_end = 0, next_start = std::numeric_limits<TimeNs>::max();
  for (const auto& o : rec[0]) last_end = std::max(last_end, o.end);
  for (const auto& o : rec[1]) next_start = std::min(next_start, o.start);
  CHECK(next_start >= last_end);
}

TEST_CASE("lowering: a workspace of 0 bytes (a calibrated algorithm that needs none) is no allocation, and runs") {
  Diamond m;
  m.g.tensor(m.ws).bytes = 0;
  const Program p = lower(m.g, serial_schedule_of(m.g), SwapPlan{});
  for (const Command& c : p.iteration) CHECK(c.tensor != m.ws);
  check_liveness(m.g, p);
  VirtualDeviceMemory dev(uint64_t{1} << 30);
  ExactCachePool pool(dev);
  AttrKernels k;
  LinearLink l(10.0, 10.0, 1000);
  GpuSpec gpu = fake_gpu();
  SimContext ctx{m.g, gpu, k, l, pool, dev};
  CHECK(simulate(p, ctx, SimOptions{}).iterations_completed == 1);
}
