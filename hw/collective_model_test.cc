#include "hw/collective_model.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

using namespace dlsim;

namespace {

// Round numbers an H100-class machine is close to: NVLink 450 GB/s a direction at 80 % (360 GB/s busbw), 2 µs a
// step; a 400 Gb/s NIC per GPU (50 GB/s) at 80 % (40 GB/s, 320 GB/s for a node of 8), 5 µs a step; 10 µs base.
Interconnect h100_class() {
  Interconnect n;
  n.base_latency_s = 10e-6;
  n.intra = {450e9, 2e-6, 0.8};
  n.inter = LinkLevel{50e9, 5e-6, 0.8};
  return n;
}

constexpr uint64_t kGB = 1'000'000'000;

}  // namespace

TEST_CASE("a 2-rank all-reduce in one node is one ring step each way at the NVLink rate") {
  // 2(n-1) = 2 steps: alpha = 10 + 2 x 2 = 14 µs; factor 2(n-1)/n = 1, so algbw = busbw = 360 GB/s.
  const CollectiveCost c = collective_cost(h100_class(), CollectiveKind::AllReduce, kGB, 2, 8, CollectiveAlgo::Ring);
  CHECK(c.algo == CollectiveAlgo::Ring);
  CHECK(c.alpha_s == Approx(14e-6));
  CHECK(c.algbw == Approx(360e9));
  CHECK(c.busbw == Approx(360e9));
  CHECK(c.time_s == Approx(14e-6 + 1.0 / 360));  // 2.791778 ms
  // At 2 ranks the tree's chain has the ring's latency and half its bandwidth: auto keeps the ring at any size.
  for (uint64_t bytes : {uint64_t{8}, uint64_t{1} << 20, kGB})
    CHECK(collective_cost(h100_class(), CollectiveKind::AllReduce, bytes, 2, 8).algo == CollectiveAlgo::Ring);
}

TEST_CASE("an 8-rank all-reduce in one node matches the ring's alpha-beta formula") {
  // 14 steps: alpha = 10 + 14 x 2 = 38 µs; algbw = 360 / (2 x 7 / 8) = 205.714 GB/s; 1 GB in 4.861111 ms.
  const CollectiveCost c = collective_cost(h100_class(), CollectiveKind::AllReduce, kGB, 8, 8);
  CHECK(c.algo == CollectiveAlgo::Ring);
  CHECK(c.alpha_s == Approx(38e-6));
  CHECK(c.algbw == Approx(360e9 / 1.75));
  CHECK(c.time_s == Approx(38e-6 + 4.861111e-3).epsilon(1e-6));
  // Inside one node the tree is a chain: 2 x 7 intra hops, the ring's latency again, so it never wins there.
  const CollectiveCost t = collective_cost(h100_class(), CollectiveKind::AllReduce, 8, 8, 8, CollectiveAlgo::Tree);
  CHECK(t.alpha_s == Approx(c.alpha_s));
  CHECK(t.algbw == Approx(180e9));
  CHECK(collective_cost(h100_class(), CollectiveKind::AllReduce, 8, 8, 8).algo == CollectiveAlgo::Ring);
}

TEST_CASE("an 8-rank all-gather, reduce-scatter and broadcast take n-1 steps") {
  const Interconnect n = h100_class();
  // 7 steps: alpha = 10 + 7 x 2 = 24 µs; all-gather / reduce-scatter algbw = 360 / (7/8) = 411.43 GB/s.
  for (CollectiveKind k : {CollectiveKind::AllGather, CollectiveKind::ReduceScatter}) {
    const CollectiveCost c = collective_cost(n, k, kGB, 8, 8);
    CHECK(c.alpha_s == Approx(24e-6));
    CHECK(c.time_s == Approx(24e-6 + 2.430556e-3).epsilon(1e-6));
  }
  // Broadcast: everything leaves the root, algbw = busbw = 360 GB/s.
  const CollectiveCost b = collective_cost(n, CollectiveKind::Broadcast, kGB, 8, 8);
  CHECK(b.alpha_s == Approx(24e-6));
  CHECK(b.algbw == Approx(360e9));
  CHECK(b.time_s == Approx(24e-6 + 1.0 / 360));
}

TEST_CASE("16 ranks over 2 nodes: the ring pays two network steps, the tree one level of log2") {
  const Interconnect n = h100_class();
  // B = min(NVLink 360, 8 NICs x 40 = 320) = 320 GB/s.
  // Ring: 30 steps, 2 across nodes: alpha = 10 + 28 x 2 + 2 x 5 = 76 µs; algbw = 320 / (2 x 15/16) = 170.667 GB/s.
  const CollectiveCost r = collective_cost(n, CollectiveKind::AllReduce, kGB, 16, 8, CollectiveAlgo::Ring);
  CHECK(r.alpha_s == Approx(76e-6));
  CHECK(r.busbw == Approx(320e9));
  CHECK(r.algbw == Approx(320e9 / 1.875));
  CHECK(r.time_s == Approx(76e-6 + 5.859375e-3));
  // Tree: alpha = 10 + 2 x (7 x 2 + log2(2) x 5) = 48 µs; algbw = 320 / 2 = 160 GB/s.
  const CollectiveCost t = collective_cost(n, CollectiveKind::AllReduce, kGB, 16, 8, CollectiveAlgo::Tree);
  CHECK(t.alpha_s == Approx(48e-6));
  CHECK(t.algbw == Approx(160e9));
  CHECK(t.busbw == Approx(160e9 * 1.875));  // 300 GB/s: below the ring's 320 by n/(n-1)
  CHECK(t.time_s == Approx(48e-6 + 6.25e-3));
  // The two cross where 28 µs = S (1/160 - 1/170.667) s/GB, S = 71.68 MB: auto takes the tree below, the ring
  // above.
  CHECK(collective_cost(n, CollectiveKind::AllReduce, uint64_t{1} << 20, 16, 8).algo == CollectiveAlgo::Tree);
  CHECK(collective_cost(n, CollectiveKind::AllReduce, 70'000'000, 16, 8).algo == CollectiveAlgo::Tree);
  CHECK(collective_cost(n, CollectiveKind::AllReduce, 74'000'000, 16, 8).algo == CollectiveAlgo::Ring);
  CHECK(collective_cost(n, CollectiveKind::AllReduce, kGB, 16, 8).algo == CollectiveAlgo::Ring);
  CHECK(collective_cost(n, CollectiveKind::AllReduce, uint64_t{1} << 20, 16, 8).time_s ==
        Approx(48e-6 + 1048576 / 160e9));
}

TEST_CASE("the tree's latency grows with log2 of the nodes, the ring's with the ranks") {
  Interconnect n = h100_class();
  n.intra.latency_s = 0;  // isolate the network steps
  n.base_latency_s = 0;
  // 1 rank a node: ring all-reduce 2(n-1) network steps, tree 2 floor(log2 n).
  for (int nodes : {2, 4, 8, 16, 32}) {
    const auto r = collective_cost(n, CollectiveKind::AllReduce, 0, nodes, 1, CollectiveAlgo::Ring);
    const auto t = collective_cost(n, CollectiveKind::AllReduce, 0, nodes, 1, CollectiveAlgo::Tree);
    CHECK(r.alpha_s == Approx(2 * (nodes - 1) * 5e-6));
    CHECK(t.alpha_s == Approx(2 * std::log2(nodes) * 5e-6));
    CHECK(r.time_s == 0);  // 0 bytes: nothing launched
  }
  CHECK(collective_cost(n, CollectiveKind::AllReduce, 1, 12, 1, CollectiveAlgo::Tree).alpha_s ==
        Approx(2 * 3 * 5e-6));  // floor(log2 12) = 3 levels
}

TEST_CASE("busbw is algbw times NCCL's factor, and a ring's busbw does not depend on the rank count") {
  const Interconnect n = h100_class();
  CHECK(bus_factor(CollectiveKind::AllReduce, 8) == Approx(1.75));
  CHECK(bus_factor(CollectiveKind::AllGather, 8) == Approx(0.875));
  CHECK(bus_factor(CollectiveKind::ReduceScatter, 4) == Approx(0.75));
  CHECK(bus_factor(CollectiveKind::Broadcast, 16) == 1);
  for (CollectiveKind k : {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
                           CollectiveKind::Broadcast}) {
    for (int ranks : {2, 4, 8}) {
      const auto c = collective_cost(n, k, 256 * kGB, ranks, 8, CollectiveAlgo::Ring);
      CHECK(c.busbw == Approx(c.algbw * bus_factor(k, ranks)));
      CHECK(c.busbw == Approx(360e9));  // the link, whatever n
      CHECK(c.time_s - c.alpha_s == Approx(256 * kGB / c.algbw));
      // nccl-tests' measured busbw, S/t x factor, tends to the link's from below as the message grows.
      const double measured = 256 * kGB / c.time_s * bus_factor(k, ranks);
      CHECK(measured < c.busbw);
      CHECK(measured > 0.999 * c.busbw);
    }
  }
}

TEST_CASE("the slowest hop bounds a ring across nodes") {
  Interconnect n = h100_class();
  n.inter->bytes_per_s = 10e9;  // a 100 Gb/s NIC per GPU at 80 %: 8 GB/s, 64 GB/s a node, far below NVLink
  const auto slow = collective_cost(n, CollectiveKind::AllGather, kGB, 16, 8);
  CHECK(slow.busbw == Approx(64e9));
  // One GPU a node: the ring's inter-node hop is that GPU's NIC alone.
  CHECK(collective_cost(n, CollectiveKind::AllGather, kGB, 4, 1).busbw == Approx(8e9));
  // A NIC fast enough is no bottleneck: NVLink bounds it again.
  n.inter->bytes_per_s = 100e9;
  CHECK(collective_cost(n, CollectiveKind::AllGather, kGB, 16, 8).busbw == Approx(360e9));
}

TEST_CASE("bad collective parameters are refused") {
  const Interconnect n = h100_class();
  const auto ar = CollectiveKind::AllReduce;
  CHECK_THROWS_AS(collective_cost(n, ar, kGB, 1, 8), std::invalid_argument);    // nothing to talk to
  CHECK_THROWS_AS(collective_cost(n, ar, kGB, 12, 8), std::invalid_argument);   // 1.5 nodes
  CHECK_NOTHROW(collective_cost(n, ar, kGB, 6, 8));                             // 6 GPUs of one node
  CHECK_THROWS_AS(collective_cost(n, ar, kGB, 8, 0), std::invalid_argument);
  CHECK_THROWS_AS(collective_cost(n, CollectiveKind::AllGather, kGB, 8, 8, CollectiveAlgo::Tree),
                  std::invalid_argument);  // NCCL's tree is all-reduce only
  Interconnect one_node = n;
  one_node.inter.reset();
  CHECK_NOTHROW(collective_cost(one_node, ar, kGB, 8, 8));
  CHECK_THROWS_AS(collective_cost(one_node, ar, kGB, 16, 8), std::invalid_argument);  // no network described
  Interconnect bad = n;
  bad.intra.bytes_per_s = 0;
  CHECK_THROWS_AS(collective_cost(bad, ar, kGB, 8, 8), std::invalid_argument);
  bad = n;
  bad.intra.bus_efficiency = 1.5;
  CHECK_THROWS_AS(collective_cost(bad, ar, kGB, 8, 8), std::invalid_argument);
  bad = n;
  bad.inter->latency_s = std::numeric_limits<double>::quiet_NaN();
  CHECK_NOTHROW(collective_cost(bad, ar, kGB, 8, 8));  // one node never reads the network
  CHECK_THROWS_AS(collective_cost(bad, ar, kGB, 16, 8), std::invalid_argument);
  bad = n;
  bad.base_latency_s = -1e-6;
  CHECK_THROWS_AS(collective_cost(bad, ar, kGB, 8, 8), std::invalid_argument);
}
