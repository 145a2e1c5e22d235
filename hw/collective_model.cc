#include "hw/collective_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/strings.h"
#include "workloads/collective_graph_op.h"

namespace dlsim {

std::string to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce: return "all_reduce";
    case CollectiveKind::AllGather: return "all_gather";
    case CollectiveKind::ReduceScatter: return "reduce_scatter";
    case CollectiveKind::Broadcast: return "broadcast";
  }
  return "?";
}

std::string to_string(CollectiveAlgo a) {
  switch (a) {
    case CollectiveAlgo::Ring: return "ring";
    case CollectiveAlgo::Tree: return "tree";
    case CollectiveAlgo::Auto: return "auto";
  }
  return "?";
}

// One formula for the HBM traffic a collective op is charged and the bus bandwidth reported here.
OpKind collective_op_kind(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce: return OpKind::AllReduce;
    case CollectiveKind::AllGather: return OpKind::AllGather;
    case CollectiveKind::ReduceScatter: return OpKind::ReduceScatter;
    case CollectiveKind::Broadcast: return OpKind::Broadcast;
  }
  return OpKind::AllReduce;
}

double bus_factor(CollectiveKind kind, int ranks) { return collective_bus_factor(collective_op_kind(kind), ranks); }

namespace {

void check_level(const LinkLevel& l, const std::string& name) {
  // Written as negations so that a NaN fails too.
  if (!(l.bytes_per_s > 0 && std::isfinite(l.bytes_per_s)))
    throw std::invalid_argument(name + " link rate must be positive, got " + significant(l.bytes_per_s));
  if (!(l.latency_s >= 0 && std::isfinite(l.latency_s)))
    throw std::invalid_argument(name + " latency must be >= 0, got " + significant(l.latency_s));
  if (!(l.bus_efficiency > 0 && l.bus_efficiency <= 1))
    throw std::invalid_argument(name + " bus efficiency must be in (0, 1], got " + significant(l.bus_efficiency));
}

// floor(log2 x) for x >= 1: the depth of a binary tree over x nodes, as NCCL counts its inter-node hops.
int floor_log2(int x) {
  int d = 0;
  while (x > 1) {
    x >>= 1;
    ++d;
  }
  return d;
}

struct Shape {
  int n;      // ranks
  int r;      // ranks per node
  int nodes;  // n / r
};

// The bottleneck bus bandwidth B: NVLink per GPU, or the node's NICs together when the collective spans nodes.
double bottleneck(const Interconnect& net, const Shape& s) {
  double b = net.intra.effective();
  if (s.nodes > 1) b = std::min(b, s.r * net.inter->effective());
  return b;
}

CollectiveCost ring(const Interconnect& net, CollectiveKind kind, double bytes, const Shape& s) {
  const int steps = kind == CollectiveKind::AllReduce ? 2 * (s.n - 1) : s.n - 1;
  const int inter_steps = s.nodes == 1 ? 0 : kind == CollectiveKind::AllReduce ? 2 * (s.nodes - 1) : s.nodes - 1;
  CollectiveCost c;
  c.algo = CollectiveAlgo::Ring;
  c.alpha_s = net.base_latency_s + (steps - inter_steps) * net.intra.latency_s;
  if (inter_steps > 0) c.alpha_s += inter_steps * net.inter->latency_s;
  c.busbw = bottleneck(net, s);
  c.algbw = c.busbw / bus_factor(kind, s.n);
  c.time_s = c.alpha_s + bytes / c.algbw;
  return c;
}

CollectiveCost tree(const Interconnect& net, CollectiveKind kind, double bytes, const Shape& s) {
  CollectiveCost c;
  c.algo = CollectiveAlgo::Tree;
  c.alpha_s = net.base_latency_s + 2 * (s.r - 1) * net.intra.latency_s;
  if (s.nodes > 1) c.alpha_s += 2 * floor_log2(s.nodes) * net.inter->latency_s;
  c.algbw = bottleneck(net, s) / 2;
  c.busbw = c.algbw * bus_factor(kind, s.n);
  c.time_s = c.alpha_s + bytes / c.algbw;
  return c;
}

}  // namespace

CollectiveCost collective_cost(const Interconnect& net, CollectiveKind kind, uint64_t bytes, int ranks,
                               int gpus_per_node, CollectiveAlgo algo) {
  if (ranks < 2) throw std::invalid_argument("a collective needs at least 2 ranks, got " + std::to_string(ranks));
  if (gpus_per_node < 1)
    throw std::invalid_argument("a node needs at least 1 GPU, got " + std::to_string(gpus_per_node));
  if (ranks > gpus_per_node && ranks % gpus_per_node != 0)
    throw std::invalid_argument(std::to_string(ranks) + " ranks are not a whole number of nodes of " +
                                std::to_string(gpus_per_node) + " GPUs");
  if (!(net.base_latency_s >= 0 && std::isfinite(net.base_latency_s)))
    throw std::invalid_argument("base latency must be >= 0, got " + significant(net.base_latency_s));
  check_level(net.intra, "intra-node");
  const int r = std::min(ranks, gpus_per_node);
  const Shape s{ranks, r, ranks / r};
  if (s.nodes > 1) {
    if (!net.inter)
      throw std::invalid_argument(std::to_string(s.nodes) + " nodes need the interconnect's inter-node level");
    check_level(*net.inter, "inter-node");
  }
  if (algo == CollectiveAlgo::Tree && kind != CollectiveKind::AllReduce)
    throw std::invalid_argument("NCCL's tree runs all-reduce only, not " + to_string(kind));
  const double b = static_cast<double>(bytes);
  CollectiveCost c;
  if (algo == CollectiveAlgo::Tree) {
    c = tree(net, kind, b, s);
  } else {
    c = ring(net, kind, b, s);
    // Auto, as NCCL's tuner does: the lowest predicted time among the algorithms the collective allows (ring on a
    // tie, its bandwidth being the higher).
    if (algo == CollectiveAlgo::Auto && kind == CollectiveKind::AllReduce) {
      const CollectiveCost t = tree(net, kind, b, s);
      if (t.time_s < c.time_s) c = t;
    }
  }
  if (bytes == 0) c.time_s = 0;  // nothing to move: NCCL returns before launching anything
  return c;
}

}  // namespace dlsim
