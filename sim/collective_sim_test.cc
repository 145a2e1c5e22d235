// Collectives simulated (hw/collective_op.h, program/comm_streams.h): one rank's timeline, each collective on its
// communication stream taking the alpha-beta time of its group however many ranks it has, and sharing HBM with a
// compute kernel that overlaps it through the device model's bandwidth sharing (sim/device_model.h).
#include <catch2/catch.hpp>

#include <cmath>

#include "common/config_error.h"
#include "hw/collective_op.h"
#include "policies/pool/virtual_device_memory.h"
#include "policies/testing/fakes.h"
#include "program/lower.h"
#include "sim/executor.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// The fake stand-in kernels, and collectives priced as every shipped kernel model prices them (hw/roofline.cc,
// hw/table_cost_model.cc, hw/fitted/fitted_cost_model.cc all call collective_kernel_cost first).
class CollectiveKernels : public AttrKernels {
 public:
  explicit CollectiveKernels(const GpuSpec& spec) : spec_(spec) {}
  KernelCost cost(const Graph& g, const Op& op) const override {
    if (is_collective(op.kind)) return collective_kernel_cost(spec_, op);
    return AttrKernels::cost(g, op);
  }

 private:
  const GpuSpec& spec_;
};

// docs/multi-gpu.md's worked interconnect: alpha_0 = 10 us, NVLink 450 GB/s x 0.8 = 360 GB/s with 2 us a step, a
// 50 GB/s x 0.8 NIC per GPU with 5 us a step; 8 GPUs a node; 16 channels. HBM 1 TB/s, 90 % shareable. Allocation
// costs nothing, so that the iteration starts at 0 ns after the setup's allocations.
GpuSpec linked_gpu() {
  GpuSpec s = fake_gpu();
  s.file = "configs/hw/linked.yaml";
  s.malloc_base_ns = 0;
  s.hbm_bandwidth = 1e12;
  Interconnect net;
  net.base_latency_s = 10e-6;
  net.intra = {450e9, 2e-6, 0.8};
  net.inter = LinkLevel{50e9, 5e-6, 0.8};
  s.interconnect = net;
  s.node = NodeSpec{8, 0};
  return s;
}

TensorId persistent(Graph& g, const std::string& name, uint64_t bytes) { return tensor(g, name, bytes, true); }

OpId collective(Graph& g, CollectiveKind kind, uint64_t bytes, int ranks, std::vector<TensorId> in,
                std::vector<TensorId> out, int tag = 0) {
  CollectiveOp c;
  c.name = to_string(kind);
  c.kind = kind;
  c.message_bytes = bytes;
  c.ranks = ranks;
  c.stream_tag = tag;
  c.inputs = std::move(in);
  c.outputs = std::move(out);
  return add_collective(g, c);
}

RunResult run(const Graph& g, const GpuSpec& gpu) {
  const Program p = lower(g, serial_schedule_of(g), SwapPlan{});
  VirtualDeviceMemory dev(uint64_t{1} << 34);
  ExactCachePool pool(dev);
  CollectiveKernels kernels(gpu);
  LinearLink link(10.0, 10.0, 1000);
  SimContext ctx{g, gpu, kernels, link, pool, dev};
  return simulate(p, ctx, SimOptions{});
}

const OpRecord& record(const RunResult& r, OpId id) {
  for (const OpRecord& o : r.trace.ops)
    if (o.op == id && o.iteration == 0) return o;
  FAIL("no record of op " << id);
  return r.trace.ops.front();
}

// The alpha-beta time within one node of 8, from docs/multi-gpu.md's table, ns rounded as the kernel's duration.
TimeNs by_hand(CollectiveKind kind, double bytes, int n) {
  const bool all_reduce = kind == CollectiveKind::AllReduce;
  const double steps = all_reduce ? 2.0 * (n - 1) : n - 1.0;
  const double alpha = 10e-6 + steps * 2e-6;
  const double algbw = 360e9 * n / steps;  // B n / (2(n-1)) for all-reduce, B n / (n-1) for the other two
  return static_cast<TimeNs>(std::llround((alpha + bytes / algbw) * 1e9));
}

}  // namespace

TEST_CASE("collectives simulated: alone on its stream, a collective takes the alpha-beta time for 2 and 8 ranks") {
  const GpuSpec gpu = linked_gpu();
  const uint64_t s = 100'000'000;
  for (CollectiveKind kind : {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter})
    for (int n : {2, 8}) {
      INFO(to_string(kind) << " over " << n << " ranks");
      Graph g;
      // all-gather: the shard in, the whole array out; reduce-scatter the reverse; all-reduce in place
      const TensorId whole = persistent(g, "whole", s), shard = persistent(g, "shard", s / static_cast<uint64_t>(n));
      const OpId c = kind == CollectiveKind::AllGather     ? collective(g, kind, s, n, {shard}, {whole})
                     : kind == CollectiveKind::ReduceScatter ? collective(g, kind, s, n, {whole}, {shard})
                                                             : collective(g, kind, s, n, {whole}, {whole});
      const RunResult r = run(g, gpu);
      const OpRecord& o = record(r, c);
      CHECK(o.stream == 1);  // the communication stream after the one compute stream
      CHECK(o.start == 0);
      CHECK(o.end - o.start == by_hand(kind, static_cast<double>(s), n));
    }
  // The numbers of docs/multi-gpu.md's table, 1e8 B: all-reduce 2 ranks 14 us + 277.778 us; 8 ranks 38 us +
  // 486.111 us; all-gather 8 ranks 24 us + 243.056 us.
  CHECK(by_hand(CollectiveKind::AllReduce, 1e8, 2) == 291778);
  CHECK(by_hand(CollectiveKind::AllReduce, 1e8, 8) == 524111);
  CHECK(by_hand(CollectiveKind::AllGather, 1e8, 8) == 267056);
}

TEST_CASE("collectives simulated: SPMD, a 512-rank all-reduce costs the simulator what a 2-rank one does") {
  const GpuSpec gpu = linked_gpu();
  auto one = [&](int n) {
    Graph g;
    const TensorId x = persistent(g, "x", 1'000'000);
    const OpId c = collective(g, CollectiveKind::AllReduce, 1'000'000, n, {x}, {x});
    const RunResult r = run(g, gpu);
    Op probe = g.op(c);
    return std::make_pair(r, collective_kernel_cost(gpu, probe).duration_ns);
  };
  const auto [two, two_ns] = one(2);
  const auto [many, many_ns] = one(512);  // 64 nodes of 8
  CHECK(many.events_processed == two.events_processed);
  CHECK(record(many, 0).end - record(many, 0).start == many_ns);
  CHECK(many_ns > two_ns);
}

TEST_CASE("collectives simulated: overlapping a memory-bound kernel, both slow by their modelled HBM share") {
  GpuSpec gpu = linked_gpu();
  Graph g;
  const TensorId a = persistent(g, "a", 4096), b = persistent(g, "b", 4096), grad = persistent(g, "grad", 100'000'000);
  // a compute kernel moving 1e9 B in 2 ms (500 GB/s), on half the SMs
  const OpId k = op(g, "compute", {a}, {b}, 2'000'000, 500);
  g.op(k).bytes_read = 1'000'000'000;
  // an independent 8-rank all-reduce of 1e8 B: 524.111 us alone, 3.5e8 B of HBM traffic in that time
  const OpId c = collective(g, CollectiveKind::AllReduce, 100'000'000, 8, {grad}, {grad});
  const RunResult r = run(g, gpu);
  const OpRecord& ko = record(r, k);
  const OpRecord& co = record(r, c);
  REQUIRE(ko.start == 0);
  REQUIRE(co.start == 0);  // 16 NCCL blocks beside the kernel's 50: both resident at once
  // The device model's sharing: demands d (bytes over standalone time) over 90 % of 1 TB/s; each kernel's rate is
  // 1 / (1 + m (over - 1)), m its demand over that bandwidth.
  const double alone = static_cast<double>(by_hand(CollectiveKind::AllReduce, 1e8, 8));
  const double shared = 0.9e12;
  const double d_c = 3.5e8 * 1e9 / alone, d_k = 1e9 * 1e9 / 2e6;
  const double over = (d_c + d_k) / shared;
  const double rate_c = 1 / (1 + d_c / shared * (over - 1)), rate_k = 1 / (1 + d_k / shared * (over - 1));
  const double c_ns = alone / rate_c;
  CHECK(static_cast<double>(co.end - co.start) == Approx(c_ns).margin(2));
  // the kernel ran at rate_k while the all-reduce ran, then alone
  CHECK(static_cast<double>(ko.end) == Approx(c_ns + (2e6 - c_ns * rate_k)).margin(2));
  // 524.111 us alone, 3.5e8 B in it is 667.8 GB/s; with the kernel's 500 GB/s the HBM is 1.30x oversubscribed,
  // and the all-reduce (m = 0.742) takes 22.1 % longer: 639.83 us.
  CHECK(c_ns / alone == Approx(1.2208).epsilon(1e-3));
}

TEST_CASE("collectives simulated: the events around a collective, and one stream per tag") {
  const GpuSpec gpu = linked_gpu();
  Graph g;
  const TensorId x = persistent(g, "x", 4096), grad = persistent(g, "grad", 8'000'000),
                 shard = persistent(g, "shard", 1'000'000), full = persistent(g, "full", 8'000'000),
                 y = persistent(g, "y", 4096);
  const OpId producer = op(g, "producer", {x}, {grad}, 50'000, 500);
  const OpId reduce = collective(g, CollectiveKind::AllReduce, 8'000'000, 8, {grad}, {grad}, 3);
  const OpId gather = collective(g, CollectiveKind::AllGather, 8'000'000, 8, {shard}, {full}, 1);
  const OpId consumer = op(g, "consumer", {grad, full}, {y}, 10'000);
  const RunResult r = run(g, gpu);
  // tags 1 and 3 present: streams 1 and 2, in tag order
  CHECK(record(r, gather).stream == 1);
  CHECK(record(r, reduce).stream == 2);
  CHECK(record(r, producer).stream == 0);
  CHECK(record(r, consumer).stream == 0);
  CHECK(record(r, gather).start == 0);  // nothing to wait for: overlaps the producer
  CHECK(record(r, reduce).start >= record(r, producer).end);
  CHECK(record(r, consumer).start >= std::max(record(r, reduce).end, record(r, gather).end));
}

TEST_CASE("collectives simulated: without an interconnect the run stops naming the file and the key") {
  GpuSpec gpu = fake_gpu();
  gpu.file = "configs/hw/single.yaml";
  Graph g;
  const TensorId x = persistent(g, "x", 4096);
  collective(g, CollectiveKind::ReduceScatter, 4096, 2, {x}, {x});
  try {
    (void)run(g, gpu);
    FAIL("the run priced a collective without an interconnect");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "configs/hw/single.yaml");
    CHECK(e.key() == "interconnect");
  }
}
