#include "hw/collective_op.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/config_error.h"
#include "common/sim_time.h"
#include "workloads/collective_graph_op.h"

namespace dlsim {

CollectiveKind collective_kind(OpKind k) {
  switch (k) {
    case OpKind::AllReduce: return CollectiveKind::AllReduce;
    case OpKind::AllGather: return CollectiveKind::AllGather;
    case OpKind::ReduceScatter: return CollectiveKind::ReduceScatter;
    case OpKind::Broadcast: return CollectiveKind::Broadcast;
    default: break;
  }
  throw std::logic_error(std::string("op kind ") + to_string(k) + " is not a collective");
}

namespace {

constexpr int kMaxStreamTag = 15;

void check_tensors(const Graph& g, const std::vector<TensorId>& ids, const std::string& name) {
  for (TensorId t : ids)
    if (t < 0 || static_cast<size_t>(t) >= g.tensors().size())
      throw std::invalid_argument("collective '" + name + "': tensor " + std::to_string(t) + " is not in the graph");
}

std::string describe(const Op& op, int64_t ranks) {
  return "op '" + op.name + "' (" + to_string(op.kind) + " over " + std::to_string(ranks) + " ranks)";
}

}  // namespace

OpId add_collective(Graph& g, const CollectiveOp& c) {
  const std::string& n = c.name;
  if (c.ranks < 2)
    throw std::invalid_argument("collective '" + n + "' needs at least 2 ranks, got " + std::to_string(c.ranks) +
                                " (a group of one rank exchanges nothing: leave the op out)");
  if (c.ranks_per_node < 0 || c.ranks_per_node > c.ranks)
    throw std::invalid_argument("collective '" + n + "': ranks_per_node " + std::to_string(c.ranks_per_node) +
                                " outside [0, " + std::to_string(c.ranks) + "]");
  if (c.algo == CollectiveAlgo::Tree && c.kind != CollectiveKind::AllReduce)
    throw std::invalid_argument("collective '" + n + "': NCCL's tree runs all-reduce only, not " + to_string(c.kind));
  if (c.stream_tag < 0 || c.stream_tag > kMaxStreamTag)
    throw std::invalid_argument("collective '" + n + "': stream tag " + std::to_string(c.stream_tag) +
                                " outside [0, " + std::to_string(kMaxStreamTag) + "]");
  if (c.message_bytes > kMaxTensorBytes)
    throw std::invalid_argument("collective '" + n + "': message of " + std::to_string(c.message_bytes) +
                                " bytes is larger than any tensor");
  check_tensors(g, c.inputs, n);
  check_tensors(g, c.outputs, n);
  Op op = collective_graph_op(n, collective_op_kind(c.kind), c.message_bytes, c.ranks, c.ranks_per_node,
                              static_cast<int64_t>(c.algo), c.stream_tag, c.phase);
  op.inputs = c.inputs;
  op.outputs = c.outputs;
  return g.add_op(std::move(op));
}

CollectiveCost collective_op_cost(const GpuSpec& spec, const Op& op) {
  const CollectiveKind kind = collective_kind(op.kind);
  const int64_t ranks = op.attr(Attr::ranks);
  const int64_t per_node_attr = op.attr(Attr::ranks_per_node);
  const int64_t algo = op.attr(Attr::algorithm);
  const int64_t bytes = op.attr(Attr::message_bytes);
  if (ranks < 2 || ranks > (int64_t{1} << 24))
    throw std::invalid_argument(describe(op, ranks) + ": ranks must be in [2, 2^24]");
  if (per_node_attr < 0 || per_node_attr > ranks)
    throw std::invalid_argument(describe(op, ranks) + ": ranks_per_node " + std::to_string(per_node_attr) +
                                " outside [0, ranks]");
  if (algo < 0 || algo > static_cast<int64_t>(CollectiveAlgo::Auto))
    throw std::invalid_argument(describe(op, ranks) + ": algorithm " + std::to_string(algo) +
                                " is not 0 (ring), 1 (tree) or 2 (auto)");
  if (bytes < 0) throw std::invalid_argument(describe(op, ranks) + ": message_bytes must not be negative");
  if (!spec.interconnect || !spec.node)
    throw ConfigError(spec.file, 0, "interconnect",
                      "the hardware file has no interconnect: (and node:) section, and " + describe(op, ranks) +
                          " needs one to be priced (docs/multi-gpu.md)");
  const NodeSpec& node = *spec.node;
  const int64_t per_node = per_node_attr > 0 ? per_node_attr : std::min<int64_t>(ranks, node.gpus_per_node);
  if (per_node > node.gpus_per_node)
    throw ConfigError(spec.file, 0, "node.gpus_per_node",
                      describe(op, ranks) + " puts " + std::to_string(per_node) + " ranks on a node of " +
                          std::to_string(node.gpus_per_node) + " GPUs");
  if (ranks % per_node != 0)
    throw ConfigError(spec.file, 0, "node.gpus_per_node",
                      describe(op, ranks) + ": " + std::to_string(ranks) + " ranks do not fill whole nodes of " +
                          std::to_string(per_node) + " ranks");
  const int64_t nodes = ranks / per_node;
  if (node.max_nodes > 0 && nodes > node.max_nodes)
    throw ConfigError(spec.file, 0, "node.max_nodes",
                      describe(op, ranks) + " spans " + std::to_string(nodes) + " nodes; the machine has " +
                          std::to_string(node.max_nodes));
  if (nodes > 1 && !spec.interconnect->inter)
    throw ConfigError(spec.file, 0, "interconnect.inter_node",
                      describe(op, ranks) + " spans " + std::to_string(nodes) +
                          " nodes, and the file does not describe the network between them");
  return collective_cost(*spec.interconnect, kind, static_cast<uint64_t>(bytes), static_cast<int>(ranks),
                         static_cast<int>(per_node), static_cast<CollectiveAlgo>(algo));
}

KernelCost collective_kernel_cost(const GpuSpec& spec, const Op& op) {
  const CollectiveCost c = collective_op_cost(spec, op);
  const double ns = std::round(c.time_s * 1e9);
  if (!(ns <= static_cast<double>(kMaxDurationNs)))
    throw ConfigError(spec.file, 0, "interconnect", describe(op, op.attr(Attr::ranks)) +
                                                        " would take longer than dlsim's longest duration");
  KernelCost k;
  k.duration_ns = static_cast<TimeNs>(ns);
  const int sms = std::max(spec.sms, 1);
  const int blocks = std::min(spec.interconnect->channels, sms);
  k.blocks = blocks;
  k.blocks_per_sm = 1;
  k.sm_fraction = static_cast<double>(blocks) / sms;
  return k;
}

}  // namespace dlsim
