// vDNN on a hand-made two-convolution network (testing/swap_graphs.h: SmallConvNet): which feature maps it
// offloads under each policy, where it synchronises, and how far ahead it prefetches.
#include "policies/swap/vdnn/vdnn_swap.h"

#include <catch2/catch.hpp>

#include "policies/swap/testing/swap_graphs.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {
SwapResult vdnn(const SmallConvNet& m, const std::string& policy) {
  Params p(VdnnOptions::parameters().specs());
  p.set("policy", policy);
  VdnnSwap v(VdnnOptions::parameters().from_params(p));
  IterationProfile none;
  return v.plan({m.g, m.schedule, none, TestLink(), 1 << 30, nullptr});
}
const SwapAction* action_of(const SwapResult& r, TensorId t) {
  for (const SwapAction& a : r.plan.actions)
    if (a.tensor == t) return &a;
  return nullptr;
}
}  // namespace

TEST_CASE("vDNN_all offloads every layer input the backward pass reads again, at the layer that last reads it") {
  const SmallConvNet m;
  const SwapResult r = vdnn(m, "all");
  // x (conv1's input), r1 (pool1's input, read back by pool1.bwd and relu1.bwd) and q1 (conv2's input).
  // Not a1 (relu1's input: ReLU's backward reads its output), not a2 (the loss's backward reads l), not the
  // weights.
  REQUIRE(r.plan.actions.size() == 3);
  const SwapAction* x = action_of(r, m.x);
  const SwapAction* r1 = action_of(r, m.r1);
  const SwapAction* q1 = action_of(r, m.q1);
  REQUIRE((x && r1 && q1));
  // Offload issued with the last forward layer reading it and synchronised at that layer's end: the next
  // layer waits for it (free_after = that layer).
  CHECK(x->out_after == 0);
  CHECK(x->free_after == 0);
  CHECK(r1->out_after == 2);
  CHECK(r1->free_after == 2);
  CHECK(q1->out_after == 3);
  CHECK(q1->free_after == 3);
  // Prefetch one layer ahead: issued before the backward layer that runs just before the first consumer's.
  // q1 is first read by conv2.bwd_filter (7), whose layer (conv2's backward) starts at 6; the layer before is
  // the loss's, starting at 5: issued after 4.
  CHECK(q1->in_needed_by == 7);
  CHECK(q1->in_issue_after == 4);
  // r1 first read by pool1.bwd (8); the layer before is conv2's backward, from 6: issued after 5.
  CHECK(r1->in_needed_by == 8);
  CHECK(r1->in_issue_after == 5);
  // x read by conv1.bwd_filter (10) after relu1.bwd (9): issued after 8.
  CHECK(x->in_needed_by == 10);
  CHECK(x->in_issue_after == 8);
  CHECK(r.plan.streams == CopyStreams::Dedicated);
  CHECK(r.target_bytes == 0);  // vDNN aims at no limit
}

TEST_CASE("vDNN_conv offloads only the inputs of convolution layers") {
  const SmallConvNet m;
  const SwapResult r = vdnn(m, "conv");
  REQUIRE(r.plan.actions.size() == 2);
  CHECK(action_of(r, m.x) != nullptr);
  CHECK(action_of(r, m.q1) != nullptr);
  CHECK(action_of(r, m.r1) == nullptr);  // max-pool's input
  CHECK(r.report["offloading_layers"] == 2);
}
