#include "program/first_iteration.h"

#include <catch2/catch.hpp>

#include <stdexcept>

#include "common/byte_units.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/testing/fakes.h"
#include "program/lower.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// One parameter w and its state m (an SGD momentum buffer): forward w -> a, backward (a, w) -> g, the optimizer
// step (w, g, m) -> (w, m), and a cuBLAS-like workspace ws no op names, first wanted by the backward.
struct Step {
  Graph g;
  TensorId w, m, a, grad, ws;
  OpId fwd, bwd, opt;
  Step() {
    w = tensor(g, "w", 12 * kMiB, true);
    m = tensor(g, "m", 12 * kMiB, true);
    g.tensor(m).kind = TensorKind::OptimizerState;
    ws = tensor(g, "ws", 1 * kMiB, true);
    a = tensor(g, "a", 40 * kMiB);
    grad = tensor(g, "g", 12 * kMiB);
    fwd = op(g, "fwd", {w}, {a});
    bwd = op(g, "bwd", {a, w}, {grad});
    opt = op(g, "opt", {w, grad, m}, {w, m});
  }
  Program lowered() const { return lower(g, serial_schedule_of(g), SwapPlan{}); }
};

struct Cmd {
  CmdKind kind;
  int id;  // the tensor of an Alloc/Free, the op of a Launch
};
std::vector<Cmd> cmds(const std::vector<Command>& v) {
  std::vector<Cmd> out;
  for (const Command& c : v) out.push_back({c.kind, c.kind == CmdKind::Launch ? c.op : c.tensor});
  return out;
}
bool operator==(const Cmd& x, const Cmd& y) { return x.kind == y.kind && x.id == y.id; }

}  // namespace

TEST_CASE("first iteration: the optimizer's state is allocated at the step, after the backward freed its activations") {
  Step s;
  Program p = s.lowered();
  const std::vector<Command> iteration = p.iteration;
  allocate_at_first_use(p, s.g, {{{s.m}, {s.opt}}});
  const auto A = CmdKind::Alloc, F = CmdKind::Free, L = CmdKind::Launch;
  CHECK(cmds(p.setup) == std::vector<Cmd>{{A, s.w}, {A, s.ws}});
  CHECK(cmds(p.first_iteration) == std::vector<Cmd>{{A, s.a}, {L, s.fwd}, {A, s.grad}, {L, s.bwd}, {F, s.a},
                                                    {A, s.m}, {L, s.opt}, {F, s.grad}});
  CHECK(cmds(p.iteration) == cmds(iteration));  // the steady iterations are unchanged
  CHECK(cmds(p.teardown) == std::vector<Cmd>{{F, s.w}, {F, s.m}, {F, s.ws}});
}

TEST_CASE("first iteration: a group is allocated before its first listed op, or the first op touching it, in order") {
  Step s;
  SECTION("a workspace no op names, at its first listed op") {
    Program p = s.lowered();
    allocate_at_first_use(p, s.g, {{{s.ws}, {s.opt, s.bwd}}});
    const auto A = CmdKind::Alloc, F = CmdKind::Free, L = CmdKind::Launch;
    CHECK(cmds(p.first_iteration) == std::vector<Cmd>{{A, s.a}, {L, s.fwd}, {A, s.grad}, {A, s.ws}, {L, s.bwd},
                                                      {F, s.a}, {L, s.opt}, {F, s.grad}});
  }
  SECTION("a tensor touched before its listed op: where it is touched; two groups at one launch in group order") {
    Program p = s.lowered();
    allocate_at_first_use(p, s.g, {{{s.ws}, {s.fwd}}, {{s.m, s.w}, {s.opt}}});
    const auto A = CmdKind::Alloc, L = CmdKind::Launch;
    REQUIRE(p.first_iteration.size() >= 5);
    CHECK(cmds(p.setup).empty());
    CHECK(cmds({p.first_iteration.begin(), p.first_iteration.begin() + 5}) ==
          std::vector<Cmd>{{A, s.a}, {A, s.ws}, {A, s.m}, {A, s.w}, {L, s.fwd}});
  }
  SECTION("a group whose ops are never launched stays in setup") {
    Program p = s.lowered();
    allocate_at_first_use(p, s.g, {{{s.ws}, {}}});
    CHECK(p.first_iteration.empty());
    CHECK(p.setup.size() == 3);
  }
}

TEST_CASE("first iteration: what it cannot move is named") {
  Step s;
  Program p = s.lowered();
  CHECK_THROWS_WITH(allocate_at_first_use(p, s.g, {{{s.m}, {s.opt}}, {{s.m}, {s.bwd}}}),
                    Catch::Contains("tensor 'm'") && Catch::Contains("two groups"));
  allocate_at_first_use(p, s.g, {{{s.m}, {s.opt}}});
  CHECK_THROWS_WITH(allocate_at_first_use(p, s.g, {{{s.ws}, {s.opt}}}), Catch::Contains("already has one"));
}

TEST_CASE("first iteration: a tensor setup does not allocate, or the iteration allocates itself, is left alone") {
  Step s;
  Program p = s.lowered();
  const std::vector<Command> setup = p.setup;
  allocate_at_first_use(p, s.g, {{{s.a}, {s.opt}}});  // an activation: allocated and freed by every iteration
  CHECK(p.first_iteration.empty());
  CHECK(cmds(p.setup) == cmds(setup));
  allocate_at_first_use(p, s.g, {{{s.a, s.m}, {s.opt}}});  // m moves, a does not
  const auto A = CmdKind::Alloc, F = CmdKind::Free, L = CmdKind::Launch;
  CHECK(cmds(p.first_iteration) == std::vector<Cmd>{{A, s.a}, {L, s.fwd}, {A, s.grad}, {L, s.bwd}, {F, s.a},
                                                    {A, s.m}, {L, s.opt}, {F, s.grad}});
}
