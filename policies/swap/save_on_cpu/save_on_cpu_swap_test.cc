// PyTorch's save_on_cpu on a hand-made two-convolution network (testing/swap_graphs.h: SmallConvNet): what it
// packs (every saved tensor, once per op that saves it, parameters included), what it unpacks (once per
// backward node), and where the device copies are dropped and brought back.
#include "policies/swap/save_on_cpu/save_on_cpu_swap.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include "policies/swap/testing/swap_graphs.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {
bool has_copy(const SwapPlan& p, TensorId t, int pos, bool to_host) {
  return std::any_of(p.copies.begin(), p.copies.end(),
                     [&](const ExtraCopy& c) { return c.tensor == t && c.pos == pos && c.to_host == to_host; });
}
}  // namespace

TEST_CASE("save_on_cpu packs every saved tensor once per saving op, parameters too, on the compute stream") {
  const SmallConvNet m;
  SaveOnCpuSwap policy;
  IterationProfile none;
  const SwapResult r = policy.plan({m.g, m.schedule, none, TestLink(), 1 << 30, nullptr});
  const SwapPlan& p = r.plan;
  CHECK(p.streams == CopyStreams::Compute);
  CHECK(p.host_waits_for_copy_out);  // packed.copy_(tensor) blocks the host
  // Saved: conv1 x; relu1 r1 (its output); pool1 r1 (its input); conv2 q1 and w2; loss l. r1 is packed twice.
  CHECK(has_copy(p, m.x, 0, true));
  CHECK(has_copy(p, m.r1, 1, true));
  CHECK(has_copy(p, m.r1, 2, true));
  CHECK(has_copy(p, m.q1, 3, true));
  CHECK(has_copy(p, m.w2, 3, true));
  CHECK(has_copy(p, m.l, 4, true));
  CHECK(r.report["packs"] == 6);
  CHECK(r.report["pack_bytes"] == (1 + 4 + 4 + 1) * kMiB + kMiB / 4 + kMiB / 2);
  CHECK(r.report["parameter_pack_bytes"] == kMiB / 4);
  // Unpacks: one per (node, tensor): x, r1 twice (pool1's and relu1's nodes), q1, w2, l.
  CHECK(r.report["unpacks"] == 6);
  CHECK(r.report["unpack_bytes"] == r.report["pack_bytes"]);
}

TEST_CASE("save_on_cpu drops an activation after its last forward use and unpacks it for each node") {
  const SmallConvNet m;
  SaveOnCpuSwap policy;
  IterationProfile none;
  const SwapPlan p = policy.plan({m.g, m.schedule, none, TestLink(), 1 << 30, nullptr}).plan;
  auto find = [&](TensorId t) {
    for (const SwapAction& a : p.actions)
      if (a.tensor == t) return a;
    FAIL("no action for tensor " << t);
    return SwapAction{};
  };
  // x: no forward op after conv1 reads it; dropped after 0 (no second copy: the pack is current), back
  // right before conv1.bwd_filter (10).
  const SwapAction x = find(m.x);
  CHECK(x.copy_out == false);
  CHECK(x.free_after == 0);
  CHECK(x.in_issue_after == 9);
  CHECK(x.in_needed_by == 10);
  // r1: last forward use pool1 (2); pool1's node reads it at 8, relu1's at 9 right after: the second unpack
  // is a copy into the live device copy.
  const SwapAction r1 = find(m.r1);
  CHECK(r1.free_after == 2);
  CHECK(r1.in_needed_by == 8);
  CHECK(has_copy(p, m.r1, 9, false));
  // q1: dropped after conv2 (3), back for conv2.bwd_filter (7).
  CHECK(find(m.q1).in_needed_by == 7);
  // l is read by its node right after the forward pass: no absence, its unpack is a copy before 5.
  CHECK(has_copy(p, m.l, 5, false));
  // w2 stays on the device (the module holds it); its unpack before conv2.bwd_data (6) is a copy.
  CHECK(has_copy(p, m.w2, 6, false));
  CHECK(p.actions.size() == 3);
}
