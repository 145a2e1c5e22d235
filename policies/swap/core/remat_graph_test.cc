// Which tensors a recomputing policy may drop: one replayable writer, inputs unchanged until the replay.
#include "policies/swap/core/remat_graph.h"

#include <catch2/catch.hpp>

#include "policies/swap/testing/remat_graphs.h"
#include "policies/concurrency/concurrency_policy.h"

using namespace dlsim;
using namespace dlsim::testing;

TEST_CASE("a tensor with one replayable writer is rematerialisable, and its costs come from the profile") {
  const Chain4 m;
  const RematGraph rg(m.g, m.schedule.order, m.profile);
  CHECK(rg.producer(m.a1) == 0);
  CHECK(rg.producer(m.a3) == 2);
  CHECK(rg.producer(m.w) == -1);  // persistent
  CHECK(rg.cost(0) == 4 * kMs);
  CHECK(rg.cost(5) == kMs);
  CHECK(rg.children(m.a2) == std::vector<TensorId>{m.a3, m.g2});  // f3 and b2 read a2
  // a2 is next used at 6 (b2); it can be recomputed there from a1, live until 7.
  CHECK(rg.recomputable_at(m.a2, 6));
  // g4 (written by b4 at 4 from a4): at 7 a4, a3 and a2 are dead, each recomputed from the one before; a1 is live.
  CHECK(rg.recomputable_at(m.g4, 7));
}

TEST_CASE("in-place writers and inputs written again make a tensor not rematerialisable") {
  Graph g;
  const TensorId w = add_tensor(g, "w", kMiB, true);
  const TensorId stat = add_tensor(g, "running_mean", kMiB, true);
  const TensorId x = add_tensor(g, "x", kMiB);
  const TensorId y = add_tensor(g, "y", kMiB);
  const TensorId z = add_tensor(g, "z", kMiB);
  const TensorId u = add_tensor(g, "u", kMiB);
  add_op(g, "conv", {w}, {x});                   // 0: x from w
  add_op(g, "bn", {x, stat}, {y, stat});         // 1: y, and the running statistics in place
  add_op(g, "mul", {x}, {z});                    // 2: z from x
  add_op(g, "relu_", {z}, {z});                  // 3: z in place
  add_op(g, "upd", {w}, {w}, Phase::Optimizer);  // 4: w updated in place
  add_op(g, "use", {x, z, y}, {u});              // 5
  const Schedule s = serial_schedule_of(g);
  const RematGraph rg(g, s.order, IterationProfile{});
  CHECK(rg.cost(0) == 1);                 // no profile: 1 ns each
  CHECK(rg.replayable(1));                // running statistics are updated again, as under checkpoint
  CHECK(rg.producer(y) == 1);
  CHECK(rg.recomputable_at(y, 5));
  CHECK(rg.producer(z) == -1);            // two writers
  CHECK_FALSE(rg.replayable(2));          // z is overwritten later
  CHECK_FALSE(rg.replayable(3));          // in place
  CHECK_FALSE(rg.replayable(4));          // an optimizer step
  CHECK(rg.producer(x) == 0);
  CHECK(rg.stable_until(0) == 4);         // w is written again at 4
  CHECK(rg.recomputable_at(x, 4));        // a replay before 4 still reads the old w
  CHECK_FALSE(rg.recomputable_at(x, 5));  // one before 5 would read the updated w
}
