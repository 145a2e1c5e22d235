// Recomputation in the lowering: a dropped tensor is freed after its drop point and made again by re-running the
// ops that produce it, right before the op that needs it; ProgramLoad counts the same live bytes the executor does.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "policies/swap/core/program_load.h"
#include "program/lower.h"
#include "sim/testing/fake_run.h"
#include "policies/concurrency/concurrency_policy.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// A three-layer chain and its backward:
//   pos 0 A: x -> a (100 kB)   pos 3 Cb: b -> g2
//   pos 1 B: a -> b (100 kB)   pos 4 Bb: (a, g2) -> g1
//   pos 2 C: b -> c            pos 5 Ab: (x, g1) -> g0
// a is idle from B to Bb, the natural candidate to drop after B and recompute before Bb.
struct TrainChain {
  Graph g;
  TensorId x, a, b, c, g2, g1, g0;
  OpId A, B, C, Cb, Bb, Ab;
  TrainChain() {
    x = tensor(g, "x", 1000);
    a = tensor(g, "a", 100000);
    b = tensor(g, "b", 100000);
    c = tensor(g, "c", 1000);
    g2 = tensor(g, "g2", 1000);
    g1 = tensor(g, "g1", 1000);
    g0 = tensor(g, "g0", 1000);
    A = op(g, "A", {x}, {a});
    B = op(g, "B", {a}, {b});
    C = op(g, "C", {b}, {c});
    Cb = op(g, "Cb", {b}, {g2});
    Bb = op(g, "Bb", {a, g2}, {g1});
    Ab = op(g, "Ab", {x, g1}, {g0});
  }
};

Recomputation recompute(std::vector<Recomputation::Drop> drops, std::vector<OpId> ops, int before) {
  Recomputation r;
  r.drops = std::move(drops);
  r.ops = std::move(ops);
  r.before = before;
  return r;
}

// The iteration's commands as text, "Alloc a", "Launch A", ... (events and waits left out).
std::vector<std::string> commands(const Graph& g, const Program& p) {
  std::vector<std::string> out;
  for (const Command& c : p.iteration) {
    if (c.kind == CmdKind::Launch) out.push_back("Launch " + g.op(c.op).name);
    if (c.kind == CmdKind::Alloc) out.push_back("Alloc " + g.tensor(c.tensor).name);
    if (c.kind == CmdKind::Free) out.push_back("Free " + g.tensor(c.tensor).name);
  }
  return out;
}


uint64_t load_peak(const Graph& g, const Schedule& s, const SwapPlan& plan) {
  return ProgramLoad(g, s.order).peak_with(plan, s.stream_of);
}

}  // namespace

TEST_CASE("a dropped activation is freed after its last forward use and recomputed right before its backward use") {
  TrainChain m;
  SwapPlan plan;
  plan.recomputations.push_back(recompute({{m.a, -1}}, {m.A}, 4));
  const Program p = lower(m.g, serial_schedule_of(m.g), plan);
  CHECK(p.num_streams == 1);  // no copy streams for a recomputation
  const std::vector<std::string> want = {
      "Alloc x",  "Alloc a",   "Launch A", "Alloc b",  "Launch B",  "Free a",  // dropped after B, its last forward use
      "Alloc c",  "Launch C",  "Free c",   "Alloc g2", "Launch Cb", "Free b",
      "Alloc a",  "Launch A",                                                  // the replay, before Bb
      "Alloc g1", "Launch Bb", "Free a",   "Free g2",  "Alloc g0",  "Launch Ab", "Free x", "Free g1", "Free g0"};
  CHECK(commands(m.g, p) == want);

  const RunResult r = run_on_fakes(m.g, p);
  REQUIRE(r.iterations_completed == 1);
  // Peak: x, a, b during B (201 kB), as without the drop; during C and Cb 102 kB instead of 202 kB.
  CHECK(r.peak_live_bytes == 201000);
  CHECK(load_peak(m.g, serial_schedule_of(m.g), plan) == 201000);
  const std::vector<uint64_t> load = ProgramLoad(m.g, serial_schedule_of(m.g).order).with_plan(plan, {});
  CHECK(load == std::vector<uint64_t>{101000, 201000, 102000, 102000, 103000, 3000});
  // The replay costs one more launch of A: 7 kernels of 1 us, back to back on one stream.
  int launches_of_a = 0;
  for (const OpRecord& o : r.trace.ops) launches_of_a += o.op == m.A;
  CHECK(launches_of_a == 2);
}

TEST_CASE("a replay allocates what it needs only for itself and frees it after its last replayed reader") {
  TrainChain m;
  SwapPlan plan;
  // a dropped after B until Bb; b dropped after C and made again before Cb from a, which is dropped then: the
  // replay before Cb makes a for B only and frees it again.
  plan.recomputations.push_back(recompute({{m.a, -1}}, {m.A}, 4));
  plan.recomputations.push_back(recompute({{m.b, -1}}, {m.A, m.B}, 3));
  const Program p = lower(m.g, serial_schedule_of(m.g), plan);
  const std::vector<std::string> want = {
      "Alloc x",  "Alloc a",   "Launch A", "Alloc b",  "Launch B", "Free a",  //
      "Alloc c",  "Launch C",  "Free c",   "Free b",                           // b dropped after C
      "Alloc a",  "Launch A",  "Alloc b",  "Launch B", "Free a",               // replay before Cb: a is transient
      "Alloc g2", "Launch Cb", "Free b",                                       //
      "Alloc a",  "Launch A",                                                  // replay before Bb
      "Alloc g1", "Launch Bb", "Free a",   "Free g2",  "Alloc g0", "Launch Ab", "Free x", "Free g1", "Free g0"};
  CHECK(commands(m.g, p) == want);
  const RunResult r = run_on_fakes(m.g, p);
  REQUIRE(r.iterations_completed == 1);
  CHECK(r.peak_live_bytes == 201000);  // x, a, b during B, and again during the replayed B
  const std::vector<uint64_t> load = ProgramLoad(m.g, serial_schedule_of(m.g).order).with_plan(plan, {});
  CHECK(load == std::vector<uint64_t>{101000, 201000, 102000, 201000, 103000, 3000});
}

TEST_CASE("lowering rejects recomputations that cannot give the same values back") {
  TrainChain m;
  auto fails_with = [&](const Recomputation& r, const std::string& what) {
    SwapPlan plan;
    plan.recomputations.push_back(r);
    try {
      lower(m.g, serial_schedule_of(m.g), plan);
      FAIL("lowered: " << what);
    } catch (const std::invalid_argument& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(what) != std::string::npos);
    }
  };
  fails_with(recompute({{m.b, -1}}, {m.C}, 2), "not before position 2");               // C has not run yet
  fails_with(recompute({{m.a, 0}}, {m.A}, 4), "op 'B' at position 1 uses it while it is dropped");
  fails_with(recompute({{m.b, -1}}, {m.B}, 4), "nothing uses the tensor at or after position 4");
  fails_with(recompute({{m.a, -1}}, {m.B}, 4), "no op it re-runs writes the tensor");
  fails_with(recompute({{m.a, -1}}, {}, 4), "re-runs no op");
  fails_with(recompute({{m.a, -1}}, {m.A}, 9), "outside 1..5");
  {
    SwapPlan plan;  // the replay before Cb reads a, which is dropped from B to Bb
    plan.recomputations.push_back(recompute({{m.a, -1}}, {m.A}, 4));
    plan.recomputations.push_back(recompute({{m.b, -1}}, {m.B}, 3));
    CHECK_THROWS_WITH(lower(m.g, serial_schedule_of(m.g), plan), Catch::Contains("op 'B' reads tensor 'a', which is not on the device then"));
  }
  {
    SwapPlan plan;  // one tensor dropped twice over overlapping positions
    plan.recomputations.push_back(recompute({{m.a, -1}}, {m.A}, 4));
    plan.recomputations.push_back(recompute({{m.a, 1}}, {m.A}, 3));
    CHECK_THROWS_WITH(lower(m.g, serial_schedule_of(m.g), plan), Catch::Contains("two drops of tensor 'a' overlap"));
  }
  {
    SwapPlan plan;  // swapped and dropped at once
    plan.recomputations.push_back(recompute({{m.a, -1}}, {m.A}, 4));
    plan.actions.push_back({m.a, 1, 3, 4});
    CHECK_THROWS_WITH(lower(m.g, serial_schedule_of(m.g), plan), Catch::Contains("is both swapped"));
  }
  Graph g;  // an in-place op: re-running it would apply it twice
  const TensorId x = tensor(g, "x", 100), w = tensor(g, "w", 100, true), y = tensor(g, "y", 100);
  const OpId f = op(g, "f", {x}, {y});
  const OpId twice = op(g, "twice", {x}, {x});
  op(g, "h", {w}, {});
  op(g, "k", {x, y}, {});
  SwapPlan plan;
  plan.recomputations.push_back(recompute({{y, -1}}, {twice}, 3));
  CHECK_THROWS_WITH(lower(g, serial_schedule_of(g), plan), Catch::Contains("writes tensor 'x', which it reads"));
  plan.recomputations[0] = recompute({{w, -1}}, {f}, 3);
  CHECK_THROWS_WITH(lower(g, serial_schedule_of(g), plan), Catch::Contains("a persistent tensor cannot be dropped"));
}

TEST_CASE("a tensor recomputed on one stream is waited for by another stream that reads it") {
  // A, B, D, E on stream 0; F on stream 1 reads a. a is dropped after B and recomputed before E, so F, whose
  // DAG predecessor A ran long before, must wait for the replay, not only for A's first run.
  Graph g;
  const TensorId x = tensor(g, "x", 1000), a = tensor(g, "a", 100000), b = tensor(g, "b", 1000),
                 d = tensor(g, "d", 1000), e = tensor(g, "e", 1000), f = tensor(g, "f", 1000);
  const OpId A = op(g, "A", {x}, {a}, 5000);
  op(g, "B", {a}, {b});
  op(g, "D", {b}, {d});
  op(g, "E", {x}, {e});
  const OpId F = op(g, "F", {a}, {f});
  Schedule s = serial_schedule_of(g);
  s.num_streams = 2;
  s.stream_of = {0, 0, 0, 0, 1};
  SwapPlan plan;
  plan.recomputations.push_back(recompute({{a, -1}}, {A}, 3));
  const Program p = lower(g, s, plan);
  const RunResult r = run_on_fakes(g, p);
  REQUIRE(r.iterations_completed == 1);
  TimeNs replay_end = 0, f_start = 0;
  int seen_a = 0;
  for (const OpRecord& o : r.trace.ops) {
    if (o.op == A && ++seen_a == 2) replay_end = o.end;
    if (o.op == F) f_start = o.start;
  }
  REQUIRE(seen_a == 2);
  CHECK(f_start >= replay_end);
  CHECK(replay_end > 5000);
}
