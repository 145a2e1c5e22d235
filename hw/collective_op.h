#pragma once
// A collective (all-reduce, all-gather, reduce-scatter, broadcast) as an op of the graph: how one is added, and what
// its kernel costs on the modelled GPU. SPMD symmetry: the graph is one rank's; every rank runs the same ops, so a
// collective that starts on this rank starts on all of them together and ends after the alpha-beta time of
// hw/collective_model.h for its number of ranks. No other rank is simulated, and a 512-rank collective costs the
// simulator what a 2-rank one does.
//
// As PyTorch's ProcessGroupNCCL runs them: each collective is one NCCL kernel on a communication stream of its own
// (the op's comm_stream tag; program/comm_streams.h gives each tag a stream after the compute streams), which waits
// for the events of the ops that wrote its inputs and is waited for by the ops that read its outputs (lowering's
// cross-stream events, program/lower.h), and its memory is freed with record_stream. The kernel runs one thread
// block per NCCL channel (Interconnect::channels), each a block of up to 512-640 threads with most of an SM's
// shared memory for its FIFO buffers, so it is modelled as one block per SM: a collective holds `channels` SMs
// while it runs (sim/device_model.h dispatches it like any kernel: it waits for free SMs behind a kernel that
// fills the GPU, and takes SMs from those that come after). It reads what it sends and writes what it receives
// through HBM (its bytes_read and bytes_written), so it takes HBM bandwidth from overlapping compute, and loses
// some to it, through the device model's bandwidth sharing.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/collective_model.h"
#include "hw/cost_model.h"
#include "hw/gpu_spec.h"
#include "workloads/graph.h"

namespace dlsim {

// The collective an op of a collective kind (is_collective) runs; std::logic_error for another kind.
CollectiveKind collective_kind(OpKind k);

// What add_collective inserts.
struct CollectiveOp {
  std::string name;
  CollectiveKind kind = CollectiveKind::AllReduce;
  // nccl-tests' S (hw/collective_model.h): the all-reduced or broadcast buffer, the whole gathered array for
  // all-gather and reduce-scatter (per-rank shard x ranks).
  uint64_t message_bytes = 0;
  int ranks = 2;               // at least 2: a group of one rank has nothing to exchange (do not insert the op)
  // Ranks of the group on one node; 0: as many as fit (min(ranks, node.gpus_per_node)). An FSDP group across the
  // nodes of a tensor-parallel layout has one rank per node: ranks_per_node = 1.
  int ranks_per_node = 0;
  CollectiveAlgo algo = CollectiveAlgo::Auto;
  // Collectives with the same tag share one communication stream (PyTorch: one NCCL stream per process group;
  // FSDP2 keeps its all-gathers and reduce-scatters on two); in [0, 15].
  int stream_tag = 0;
  Phase phase = Phase::Backward;
  // All-reduce and broadcast work in place: the same tensor in and out. All-gather reads the shard and writes the
  // gathered tensor; reduce-scatter the reverse. The ops that read its outputs wait for it on their streams.
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
};

// Appends the collective to the graph's issue order and returns its id; the caller places it in the order it
// wants (the graph's order is the host's: after the op that writes its input, before the first reader of its
// output). Sets the op's attributes (message_bytes, ranks, ranks_per_node, algorithm, comm_stream) and its HBM
// traffic: a ring moves bus_factor x S through every rank's link, read from HBM on the way out and written on the
// way in, so bytes_read = bytes_written = ceil(bus_factor(kind, ranks) x S). Throws std::invalid_argument for
// fewer than 2 ranks, ranks_per_node < 0 or above ranks, a tree for anything but all-reduce, a tag outside [0, 15],
// or a tensor id not in the graph.
OpId add_collective(Graph& g, const CollectiveOp& c);

// The price of a collective op on `spec`: its alpha-beta cost for the op's ranks on the spec's interconnect and
// node. A ConfigError naming the hardware file and the key (interconnect, node.gpus_per_node, node.max_nodes,
// interconnect.inter_node) when the file cannot price it: no interconnect section, a group larger than the machine
// or than a node, ranks that do not fill whole nodes. std::invalid_argument for an op whose attributes are out of
// range (a hand-written program file).
CollectiveCost collective_op_cost(const GpuSpec& spec, const Op& op);
// The same as the kernel the device runs: that time, on Interconnect::channels blocks of one SM each.
KernelCost collective_kernel_cost(const GpuSpec& spec, const Op& op);

}  // namespace dlsim
