#include <catch2/catch.hpp>

#include "policies/concurrency/op_dag.h"
#include "policies/testing/fakes.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// x -> a; a -> {b (3 us), c (1 us)}; (b, c) -> d: a diamond.
struct Diamond {
  Graph g;
  OpId a, b, c, d;
  Diamond() {
    const TensorId x = tensor(g, "x", 64), ta = tensor(g, "ta", 64), tb = tensor(g, "tb", 64), tc = tensor(g, "tc", 64),
                   td = tensor(g, "td", 64);
    a = op(g, "a", {x}, {ta}, 2000);
    b = op(g, "b", {ta}, {tb}, 3000);
    c = op(g, "c", {ta}, {tc}, 1000);
    d = op(g, "d", {tb, tc}, {td}, 500);
    for (const Op& o : g.ops()) g.op(o.id).bytes_read = 64;  // kernels, not views
  }
};

}  // namespace

TEST_CASE("op_dag, bottom levels and the critical path of a diamond") {
  Diamond m;
  const OpDag dag = op_dag(m.g);
  CHECK(dag.succ[static_cast<size_t>(m.a)] == std::vector<OpId>{m.b, m.c});
  CHECK(dag.pred[static_cast<size_t>(m.d)] == std::vector<OpId>{m.b, m.c});
  AttrKernels k;
  const OpCosts c = op_costs(m.g, k);
  const std::vector<TimeNs> bl = bottom_levels(m.g, dag, c.duration);
  CHECK(bl[static_cast<size_t>(m.a)] == 2000 + 3000 + 500);
  CHECK(bl[static_cast<size_t>(m.c)] == 1500);
  CHECK(critical_path_ns(m.g, dag, c.duration) == 5500);
}

TEST_CASE("stage widths count the ops that could run at once") {
  Diamond m;
  const OpDag dag = op_dag(m.g);
  CHECK(stage_widths(m.g, dag, {Phase::Forward}) == std::vector<int>{1, 2, 1});
  CHECK(stage_widths(m.g, dag, {Phase::Backward}).empty());
}

TEST_CASE("is_topological names the op that comes before its predecessor") {
  Diamond m;
  const OpDag dag = op_dag(m.g);
  std::string why;
  CHECK(is_topological(m.g, dag, {m.a, m.c, m.b, m.d}, &why));
  CHECK_FALSE(is_topological(m.g, dag, {m.a, m.d, m.b, m.c}, &why));
  CHECK(why == "op 'd' comes before its predecessor 'b'");
  CHECK_FALSE(is_topological(m.g, dag, {m.a, m.b, m.b, m.d}, &why));
}
