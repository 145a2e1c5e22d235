#include "workloads/collective_graph_op.h"

#include <cmath>
#include <stdexcept>

namespace dlsim {

double collective_bus_factor(OpKind kind, int64_t ranks) {
  const double n = static_cast<double>(ranks);
  switch (kind) {
    case OpKind::AllReduce: return 2 * (n - 1) / n;
    case OpKind::AllGather:
    case OpKind::ReduceScatter: return (n - 1) / n;
    case OpKind::Broadcast: return 1;
    default: break;
  }
  throw std::logic_error(std::string("op kind ") + to_string(kind) + " is not a collective");
}

Op collective_graph_op(const std::string& name, OpKind kind, uint64_t message_bytes, int64_t ranks,
                       int64_t ranks_per_node, int64_t algorithm, int64_t stream_tag, Phase phase) {
  Op op;
  op.name = name;
  op.kind = kind;
  op.phase = phase;
  const double moved = std::ceil(collective_bus_factor(kind, ranks) * static_cast<double>(message_bytes));
  op.bytes_read = op.bytes_written = static_cast<uint64_t>(moved);
  op.set_attr(Attr::message_bytes, static_cast<int64_t>(message_bytes));
  op.set_attr(Attr::ranks, ranks);
  op.set_attr(Attr::ranks_per_node, ranks_per_node);
  op.set_attr(Attr::algorithm, algorithm);
  op.set_attr(Attr::comm_stream, stream_tag);
  return op;
}

}  // namespace dlsim
