// A collective as a graph op (hw/collective_op.h): what add_collective writes, what each shipped kernel model charges
// for one with the shipped A100/H100/H200 files' interconnect (numbers worked by hand below), and the errors when a file
// or a group cannot price it. The simulated runs are sim/collective_sim_test.cc.
#include <catch2/catch.hpp>

#include <cmath>

#include "common/config_error.h"
#include "common/yaml_reader.h"
#include "hw/collective_op.h"
#include "hw/gpu_spec_file.h"
#include "hw/hardware.h"

using namespace dlsim;

namespace {

struct OneCollective {
  Graph g;
  OpId id = -1;
  OneCollective(CollectiveKind kind, uint64_t bytes, int ranks, int ranks_per_node = 0,
                CollectiveAlgo algo = CollectiveAlgo::Auto) {
    Tensor t;
    t.name = "grad";
    t.bytes = bytes;
    t.shape = {static_cast<int64_t>(bytes / 4)};
    t.persistent = true;
    const TensorId x = g.add_tensor(t);
    CollectiveOp c;
    c.name = "bucket0";
    c.kind = kind;
    c.message_bytes = bytes;
    c.ranks = ranks;
    c.ranks_per_node = ranks_per_node;
    c.algo = algo;
    c.inputs = c.outputs = {x};
    id = add_collective(g, c);
  }
  const Op& op() const { return g.op(id); }
};

// A spec of the fake kind, with the interconnect of docs/multi-gpu.md's worked example.
GpuSpec spec_with_links(int gpus_per_node = 8, int max_nodes = 0, bool inter = true) {
  GpuSpec s;
  s.file = "configs/hw/example.yaml";
  s.sms = 132;
  Interconnect net;
  net.base_latency_s = 10e-6;
  net.intra = {450e9, 2e-6, 0.8};
  if (inter) net.inter = LinkLevel{50e9, 5e-6, 0.8};
  s.interconnect = net;
  s.node = NodeSpec{gpus_per_node, max_nodes};
  return s;
}

template <class F>
ConfigError config_error_of(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("no ConfigError");
  return ConfigError("", 0, "", "");
}

}  // namespace

TEST_CASE("collective ops: add_collective writes the attributes and a ring's HBM traffic") {
  OneCollective ar(CollectiveKind::AllReduce, 100'000'000, 8, 0, CollectiveAlgo::Ring);
  const Op& op = ar.op();
  CHECK(op.kind == OpKind::AllReduce);
  CHECK(is_collective(op.kind));
  CHECK(collective_kind(op.kind) == CollectiveKind::AllReduce);
  CHECK(op.attr(Attr::message_bytes) == 100'000'000);
  CHECK(op.attr(Attr::ranks) == 8);
  CHECK(op.attr(Attr::ranks_per_node) == 0);
  CHECK(op.attr(Attr::algorithm) == 0);
  CHECK(op.attr(Attr::comm_stream) == 0);
  // 2(n-1)/n = 1.75 of the buffer out of and into HBM on every rank
  CHECK(op.bytes_read == 175'000'000);
  CHECK(op.bytes_written == 175'000'000);
  OneCollective ag(CollectiveKind::AllGather, 4'000'000, 4);
  CHECK(ag.op().bytes_read == 3'000'000);  // (n-1)/n
  CHECK(ag.op().attr(Attr::algorithm) == 2);  // auto by default

  Graph g;
  CollectiveOp c;
  c.name = "x";
  c.ranks = 1;
  CHECK_THROWS_WITH(add_collective(g, c), Catch::Contains("at least 2 ranks"));
  c.ranks = 4;
  c.kind = CollectiveKind::AllGather;
  c.algo = CollectiveAlgo::Tree;
  CHECK_THROWS_WITH(add_collective(g, c), Catch::Contains("all-reduce only"));
  c.algo = CollectiveAlgo::Ring;
  c.stream_tag = 16;
  CHECK_THROWS_WITH(add_collective(g, c), Catch::Contains("stream tag 16"));
  c.stream_tag = 0;
  c.inputs = {3};
  CHECK_THROWS_WITH(add_collective(g, c), Catch::Contains("tensor 3 is not in the graph"));
  CHECK(g.ops().empty());
}

TEST_CASE("collective ops: every shipped kernel model prices an all-reduce from the H100/H200 interconnect") {
  // h100-sxm-harness (table model), h100-sxm-datasheet (roofline), h200 (fitted over h200-fitted): the same links.
  // 8 ranks in one node, ring: alpha = 8.4 + 14 x 3.4 = 56.0 us; B = 450 x 0.82 = 369 GB/s, algbw = 369 x 8/14
  // = 210.857 GB/s; 1e8 B / algbw = 474.2547 us; t = 530.2547 us. The tree (alpha 56 us, algbw 184.5 GB/s) is slower.
  for (const char* name : {"h100-sxm-harness", "h100-sxm-datasheet", "h200"}) {
    INFO(name);
    const Hardware hw = load_hardware(name);
    REQUIRE(hw.spec.node);
    CHECK(hw.spec.node->gpus_per_node == 8);
    REQUIRE(hw.spec.interconnect);
    CHECK(hw.spec.interconnect->channels == 16);
    OneCollective ar(CollectiveKind::AllReduce, 100'000'000, 8);
    const KernelCost k = hw.kernels->cost(ar.g, ar.op());
    CHECK(k.duration_ns == 530255);
    CHECK(k.blocks == 16);  // one block per NCCL channel, one SM each
    CHECK(k.blocks_per_sm == 1);
    CHECK(k.sm_fraction == Approx(16.0 / 132));
  }
}

TEST_CASE("collective ops: the A100 files price a DGX A100 node and its HDR network, by hand") {
  // NVLink 3: B = 300 x 0.77 = 231 GB/s in a node; HDR: min(231, 8 x 25 x 0.96) = 192 GB/s across nodes.
  // 8 ranks, ring: alpha = 8.4 + 14 x 3.4 = 56.0 us, algbw = 231 x 8/14 = 132 GB/s: 56.0 + 757.5758 = 813.5758 us.
  // 64 ranks on 8 nodes (torchtitan's A100 layout): ring all-reduce alpha = 8.4 + 112 x 3.4 + 14 x 14 = 585.2 us,
  // algbw = 192 x 64/126 = 97.524 GB/s: 1610.591 us; tree alpha = 8.4 + 2 (7 x 3.4 + 3 x 14) = 140.0 us, algbw 96
  // GB/s: 1181.667 us, which auto takes. Ring all-gather of 64: alpha = 8.4 + 56 x 3.4 + 7 x 14 = 296.8 us, algbw =
  // 192 x 64/63 = 195.048 GB/s: 296.8 + 512.695 = 809.495 us.
  for (const char* name : {"a100-sxm-80gb", "a100-sxm-40gb"}) {
    INFO(name);
    const Hardware hw = load_hardware(name);
    REQUIRE(hw.spec.node);
    CHECK(hw.spec.node->gpus_per_node == 8);
    REQUIRE(hw.spec.interconnect);
    CHECK(hw.spec.interconnect->channels == 24);
    OneCollective node(CollectiveKind::AllReduce, 100'000'000, 8);
    const KernelCost k = hw.kernels->cost(node.g, node.op());
    CHECK(k.duration_ns == 813576);
    CHECK(k.blocks == 24);
    CHECK(k.sm_fraction == Approx(24.0 / 108));
    OneCollective eight_nodes(CollectiveKind::AllReduce, 100'000'000, 64);
    CHECK(collective_op_cost(hw.spec, eight_nodes.op()).algo == CollectiveAlgo::Tree);
    CHECK(hw.kernels->cost(eight_nodes.g, eight_nodes.op()).duration_ns == 1181667);
    OneCollective ring(CollectiveKind::AllReduce, 100'000'000, 64, 0, CollectiveAlgo::Ring);
    CHECK(hw.kernels->cost(ring.g, ring.op()).duration_ns == 1610591);
    OneCollective gather(CollectiveKind::AllGather, 100'000'000, 64);
    CHECK(hw.kernels->cost(gather.g, gather.op()).duration_ns == 809495);
  }
}

TEST_CASE("collective ops: groups across nodes on the H100 file, by hand") {
  const Hardware hw = load_hardware("h100-sxm");
  // 16 ranks on 2 nodes: ring alpha = 8.4 + 28 x 3.4 + 2 x 14 = 131.6 us, B = min(369, 8 x 47) = 369 GB/s, algbw =
  // 369 x 16/30 = 196.8 GB/s: 639.730 us; tree alpha = 8.4 + 2 (7 x 3.4 + 1 x 14) = 84.0 us, algbw 184.5 GB/s:
  // 626.005 us. Auto takes the tree.
  OneCollective two_nodes(CollectiveKind::AllReduce, 100'000'000, 16);
  CHECK(collective_op_cost(hw.spec, two_nodes.op()).algo == CollectiveAlgo::Tree);
  CHECK(hw.kernels->cost(two_nodes.g, two_nodes.op()).duration_ns == 626005);
  // 8 ranks one per node (an FSDP group across the nodes of a tensor-parallel layout): every ring step crosses the
  // network, B = min(369, 1 x 47) = 47 GB/s. Ring: 8.4 + 14 x 14 = 204.4 us + 1e8 / (47 x 8/14) = 3723.40 us.
  OneCollective spread(CollectiveKind::AllReduce, 100'000'000, 8, 1);
  CHECK(hw.kernels->cost(spread.g, spread.op()).duration_ns == 3927804);
}

TEST_CASE("collective ops: a file without an interconnect names itself and the key") {
  const Hardware hw = load_hardware("titan-x-pcie3");
  CHECK_FALSE(hw.spec.interconnect);
  OneCollective ar(CollectiveKind::AllReduce, 1'000'000, 2);
  const ConfigError e = config_error_of([&] { (void)hw.kernels->cost(ar.g, ar.op()); });
  CHECK_THAT(e.file(), Catch::EndsWith("configs/hw/titan-x-pcie3.yaml"));
  CHECK(e.key() == "interconnect");
  CHECK_THAT(e.message(), Catch::Contains("op 'bucket0' (AllReduce over 2 ranks)"));
}

TEST_CASE("collective ops: a group the machine cannot hold is an error naming the node key") {
  OneCollective too_many_per_node(CollectiveKind::AllGather, 1000, 16, 16);
  CHECK(config_error_of([&] { (void)collective_op_cost(spec_with_links(), too_many_per_node.op()); }).key() ==
        "node.gpus_per_node");
  OneCollective partial_node(CollectiveKind::AllGather, 1000, 12);
  const ConfigError partial = config_error_of([&] { (void)collective_op_cost(spec_with_links(), partial_node.op()); });
  CHECK(partial.key() == "node.gpus_per_node");
  CHECK_THAT(partial.message(), Catch::Contains("12 ranks do not fill whole nodes of 8"));
  OneCollective three_nodes(CollectiveKind::ReduceScatter, 1000, 24);
  CHECK(config_error_of([&] { (void)collective_op_cost(spec_with_links(8, 2), three_nodes.op()); }).key() ==
        "node.max_nodes");
  CHECK(config_error_of([&] { (void)collective_op_cost(spec_with_links(8, 0, false), three_nodes.op()); }).key() ==
        "interconnect.inter_node");
  // within one node a file without the network prices it
  OneCollective one_node(CollectiveKind::ReduceScatter, 1000, 8);
  CHECK(collective_op_cost(spec_with_links(8, 0, false), one_node.op()).time_s > 0);
}

TEST_CASE("collective ops: the hardware file's node and interconnect sections, and their errors") {
  const std::string path = std::string(DLSIM_SOURCE_DIR) + "/configs/hw/h100-sxm-datasheet.yaml";
  const YAML::Node doc = load_yaml_file(path);
  const GpuSpec s = gpu_spec_from_yaml(doc, path);
  REQUIRE(s.interconnect);
  CHECK(s.interconnect->base_latency_s == Approx(8.4e-6));
  CHECK(s.interconnect->intra.bytes_per_s == Approx(450e9));
  CHECK(s.interconnect->intra.bus_efficiency == Approx(0.82));
  REQUIRE(s.interconnect->inter);
  CHECK(s.interconnect->inter->bytes_per_s == Approx(50e9));
  CHECK(s.node->max_nodes == 0);  // unbounded

  YAML::Node no_node = YAML::Clone(doc);
  no_node.remove("node");
  const ConfigError e1 = config_error_of([&] { (void)gpu_spec_from_yaml(no_node, path); });
  CHECK(e1.key() == "interconnect");
  CHECK(e1.line() > 0);
  CHECK_THAT(e1.message(), Catch::Contains("node.gpus_per_node"));

  YAML::Node bounded = YAML::Clone(doc);
  bounded["node"]["max_nodes"] = 4;
  bounded["interconnect"].remove("inter_node");
  CHECK(config_error_of([&] { (void)gpu_spec_from_yaml(bounded, path); }).key() == "node");

  YAML::Node bad = YAML::Clone(doc);
  bad["node"]["gpus_per_node"] = 0;
  CHECK(config_error_of([&] { (void)gpu_spec_from_yaml(bad, path); }).key() == "node.gpus_per_node");
  YAML::Node too_many = YAML::Clone(doc);
  too_many["interconnect"]["channels"] = 65;
  CHECK(config_error_of([&] { (void)gpu_spec_from_yaml(too_many, path); }).key() == "interconnect.channels");

  YAML::Node single = YAML::Clone(doc);  // a single GPU: neither section, and it loads
  single.remove("node");
  single.remove("interconnect");
  const GpuSpec one = gpu_spec_from_yaml(single, path);
  CHECK_FALSE(one.interconnect);
  CHECK_FALSE(one.node);
}
