// The independent checker of swapped runs, on a lowered plan that is right and on copies of it broken on
// purpose: each break must be found and named.
#include "sim/check/swap_plan_checker.h"

#include <catch2/catch.hpp>

#include "program/lower.h"
#include "sim/testing/fake_run.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {
// policies/testing/fakes.h's Chain with `big` swapped out after f1 and back in after f4.
struct Swapped : Chain {
  Schedule s;
  SwapPlan plan;
  Swapped() {
    for (const Op& o : g.ops()) s.order.push_back(o.id);
    s.stream_of.assign(g.ops().size(), 0);
    plan.actions.push_back({big, 1, 4, 5});
  }
  // Runs a Program on a pool that hands freed memory straight back (so reuse is immediate) and checks it.
  SwapCheck run(const Program& p, uint64_t pinned = 1000000) const {
    return check_swapped_run(g, p, run_on_fakes(g, p, 2).trace, pinned);
  }
};

size_t find(const Program& p, CmdKind k, TensorId t) {
  for (size_t i = 0; i < p.iteration.size(); ++i)
    if (p.iteration[i].kind == k && p.iteration[i].tensor == t) return i;
  FAIL("command not found");
  return 0;
}

bool mentions(const SwapCheck& c, const std::string& what) {
  for (const auto& p : c.problems)
    if (p.find(what) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("a lowered swap plan passes the independent check, and its host bytes are counted") {
  Swapped m;
  const SwapCheck c = m.run(lower(m.g, m.s, m.plan));
  CHECK(c.ok());
  CHECK(c.host_bytes == 1000000);
  CHECK(mentions(m.run(lower(m.g, m.s, m.plan), 5), "pinned host bytes reported as 5, the Program needs 1000000"));
}

TEST_CASE("the checker finds a tensor read before it is back and a copy-in that nothing waits for") {
  Swapped m;
  Program p = lower(m.g, m.s, m.plan);
  Program no_copy = p;
  no_copy.iteration.erase(no_copy.iteration.begin() + static_cast<std::ptrdiff_t>(find(p, CmdKind::CopyIn, m.big)));
  CHECK(mentions(m.run(no_copy), "op 'f5' reads tensor 'big' before it is back on the device"));
  // without the wait for the copy-in, f5 starts as soon as f4 is done, while big is still coming in
  Program no_wait = p;
  size_t launch_f5 = 0;
  for (size_t i = 0; i < p.iteration.size(); ++i)
    if (p.iteration[i].kind == CmdKind::Launch && p.iteration[i].op == 5) launch_f5 = i;
  size_t wait = launch_f5;  // f5's wait for the copy-in: the last wait before its launch
  while (wait > 0 && p.iteration[wait].kind != CmdKind::WaitEvent) --wait;
  REQUIRE(wait > find(p, CmdKind::CopyIn, m.big));
  no_wait.iteration.erase(no_wait.iteration.begin() + static_cast<std::ptrdiff_t>(wait));
  CHECK(mentions(m.run(no_wait), "op 'f5' started before the copy-in of tensor 'big' ended"));
}

TEST_CASE("the checker finds memory reused while its copy-out is still reading it, and a copy of a dead tensor") {
  Swapped m;
  Program p = lower(m.g, m.s, m.plan);
  Program early = p;  // drop the wait before big's free: tmp takes its memory while the copy runs
  const size_t free_big = find(p, CmdKind::Free, m.big);
  REQUIRE(p.iteration[free_big - 1].kind == CmdKind::WaitEvent);
  early.iteration.erase(early.iteration.begin() + static_cast<std::ptrdiff_t>(free_big - 1));
  CHECK(mentions(m.run(early), "tensor 'tmp' reuses the memory of tensor 'big' before its copy-out ended"));
  Program off = p;  // f1 moved after the free: it would read big off the device
  const size_t f1 = [&] {
    for (size_t i = 0; i < p.iteration.size(); ++i)
      if (p.iteration[i].kind == CmdKind::Launch && p.iteration[i].op == 1) return i;
    return size_t{0};
  }();
  const Command launch = off.iteration[f1];
  off.iteration.erase(off.iteration.begin() + static_cast<std::ptrdiff_t>(f1));
  off.iteration.insert(off.iteration.begin() + static_cast<std::ptrdiff_t>(free_big), launch);
  CHECK(mentions(check_swapped_run(m.g, off, Trace{}, 1000000), "op 'f1' reads tensor 'big' while it is off the device"));
}

// What checkmate with copies writes: the host copy made early by an extra copy (big is still read by f1 after it),
// and the swap action that frees big and brings it back with no copy of its own. The free must wait for that
// copy: without the wait, tmp takes big's memory while the copy still reads it.
TEST_CASE("a host copy made early by an extra copy, then a swap with no copy of its own, passes the check") {
  Swapped m;
  m.plan.actions = {{m.big, 1, 4, 5, 1, false}};
  m.plan.copies = {{m.big, 0, true}};
  const Program p = lower(m.g, m.s, m.plan);
  CHECK(m.run(p).ok());
  const size_t free_big = find(p, CmdKind::Free, m.big);
  REQUIRE(p.iteration[free_big - 1].kind == CmdKind::WaitEvent);
  Program early = p;
  early.iteration.erase(early.iteration.begin() + static_cast<std::ptrdiff_t>(free_big - 1));
  CHECK(mentions(m.run(early), "tensor 'tmp' reuses the memory of tensor 'big' before its copy-out ended"));
}

namespace {
// A chain with its backward: A: x -> a, B: a -> b, C: b -> c, Cb: b -> g2, Bb: (a, g2) -> g1. `a` is dropped after
// B and recomputed before Bb; W, between them, overwrites x in place (an optimizer-like update) when `clobber`.
struct Recomputed {
  Graph g;
  TensorId x, a, b, c, g2, g1;
  OpId A, W;
  Schedule s;
  SwapPlan plan;
  explicit Recomputed(bool clobber = false, bool two_streams = false) {
    x = tensor(g, "x", 1000);
    a = tensor(g, "a", 100000);
    b = tensor(g, "b", 1000);
    c = tensor(g, "c", 1000);
    g2 = tensor(g, "g2", 1000);
    g1 = tensor(g, "g1", 3000);  // a size no freed block has: its allocation on stream 1 waits for nothing
    A = op(g, "A", {x}, {a}, 100000, 100);  // longer than the host's calls around the replay, on a tenth of the GPU
    op(g, "B", {a}, {b});
    op(g, "C", {b}, {c});
    W = clobber ? op(g, "W", {x, c}, {x}) : op(g, "W", {c}, {});
    op(g, "Cb", {b}, {g2});
    op(g, "Bb", {a, g2}, {g1}, 1000, 100);
    for (const Op& o : g.ops()) s.order.push_back(o.id);
    s.stream_of.assign(g.ops().size(), 0);
    if (two_streams) {
      s.num_streams = 2;
      s.stream_of.back() = 1;  // Bb on stream 1 reads the a the replay on stream 0 made
    }
    Recomputation r;
    r.drops.push_back({a, -1});
    r.ops = {A};
    r.before = 4;  // before Cb
    plan.recomputations.push_back(r);
  }
  SwapCheck run(const Program& p) const { return check_swapped_run(g, p, run_on_fakes(g, p, 2).trace, 0); }
};
}  // namespace

TEST_CASE("a recomputation passes the independent check on one stream and on two") {
  const Recomputed one;
  CHECK(one.run(lower(one.g, one.s, one.plan)).problems == std::vector<std::string>{});
  const Recomputed two(false, true);
  CHECK(two.run(lower(two.g, two.s, two.plan)).problems == std::vector<std::string>{});
}

TEST_CASE("the checker finds a recomputation that reads a changed input, a dropped tensor read, and a missing wait") {
  const Recomputed clobbered(true);  // W rewrote x before the replay of A reads it
  CHECK(mentions(clobbered.run(lower(clobbered.g, clobbered.s, clobbered.plan)),
                 "op 'A' runs again reading tensor 'x', which changed since its first run"));

  const Recomputed m;
  Program p = lower(m.g, m.s, m.plan);
  const size_t realloc = [&] {  // the replay's Alloc of a: its second Alloc
    size_t seen = 0;
    for (size_t i = 0; i < p.iteration.size(); ++i)
      if (p.iteration[i].kind == CmdKind::Alloc && p.iteration[i].tensor == m.a && ++seen == 2) return i;
    FAIL("no second alloc of a");
    return size_t{0};
  }();
  Program no_replay = p;  // drop the replayed launch: Bb reads memory nothing wrote since it was allocated again
  REQUIRE(no_replay.iteration[realloc + 1].kind == CmdKind::Launch);
  no_replay.iteration.erase(no_replay.iteration.begin() + static_cast<long>(realloc) + 1);
  CHECK(mentions(m.run(no_replay), "op 'Bb' reads tensor 'a' before it is back on the device"));

  const Recomputed two(false, true);
  Program unsynced = lower(two.g, two.s, two.plan);
  std::erase_if(unsynced.iteration, [](const Command& c) {  // Bb's stream stops waiting for stream 0
    return c.kind == CmdKind::WaitEvent && c.stream == 1;
  });
  CHECK(mentions(two.run(unsynced), "op 'Bb' started before op 'A' finished writing tensor 'a'"));
}
