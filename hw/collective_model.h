#pragma once
// A collective (all-reduce, all-gather, reduce-scatter, broadcast) over NVLink within a node and the network
// between nodes, priced the way NCCL's own tuner prices it: time = alpha + bytes / algbw, one alpha-beta pair per
// algorithm (ring, tree). The foundation of issue 32's "collectives as device work": GpuSpec holds the hardware
// file's Interconnect and NodeSpec, and a collective op of the graph (hw/collective_op.h) is priced with it.
//
// Definitions follow nccl-tests (doc/PERFORMANCE.md) and NCCL's tuning model (src/graph/tuning.cc):
// - bytes S is the buffer nccl-tests reports: all-reduce's and broadcast's buffer, the WHOLE gathered array for
//   all-gather and reduce-scatter (per-rank count x ranks).
// - algbw = S / t; busbw = algbw x factor, factor 2(n-1)/n for all-reduce, (n-1)/n for all-gather and
//   reduce-scatter, 1 for broadcast: the rate each rank's link must sustain, comparable with its hardware peak.
// - a ring moves busbw-worth of bytes through every rank, so its algbw is B / factor, B the bottleneck bus
//   bandwidth; across nodes the ring crosses each node's boundary once per channel and NCCL runs one channel per
//   NIC, so the node's NICs together (r x the NIC per GPU, r = the ranks on a node) carry what one GPU's NVLink
//   carries: the slowest hop bounds the ring, B = min(intra, r x inter), each times its bus efficiency.
// - a tree all-reduce (NCCL's double binary tree: a chain inside each node, binary trees across nodes) reduces up
//   and broadcasts down, 2S through every rank's link: algbw = B / 2 whatever n (NCCL's ratio of 0.5), a little
//   below the ring's B n / (2(n-1)), but its latency grows with log2(nodes) rather than with ranks.
// - latency: a base cost per collective plus one hop latency per step, a step crossing nodes paying the network's:
//   ring all-reduce 2(n-1) steps of which 2(nodes-1) cross nodes; ring all-gather, reduce-scatter and broadcast
//   (a pipelined chain) n-1 steps of which nodes-1 cross; tree all-reduce 2((r-1) intra hops +
//   floor(log2 nodes) inter hops).
// NCCL's protocols (LL, LL128, Simple) are not told apart: one latency and one efficiency per level stand for
// the protocol NCCL picks at the sizes that matter. NVLS (NVSwitch multicast), CollNet and PAT are not modelled.
#include <cstdint>
#include <optional>
#include <string>

#include "workloads/op_kind.h"

namespace dlsim {

enum class CollectiveKind { AllReduce, AllGather, ReduceScatter, Broadcast };
enum class CollectiveAlgo { Ring, Tree, Auto };  // Auto: the faster of those the collective allows

std::string to_string(CollectiveKind k);
std::string to_string(CollectiveAlgo a);

// One level of the interconnect, per GPU and per direction.
struct LinkLevel {
  double bytes_per_s = 0;   // the link's nominal rate per GPU (NVLink's per-direction rate; the GPU's NIC)
  double latency_s = 0;     // one step's hop latency
  double bus_efficiency = 1;  // achieved busbw / nominal rate at large sizes (nccl-tests' plateau), in (0, 1]
  double effective() const { return bytes_per_s * bus_efficiency; }
};

// What the hardware file's `interconnect:` section describes (hw/interconnect_file.h).
struct Interconnect {
  double base_latency_s = 0;        // paid once per collective (NCCL's base latency: launch and setup)
  LinkLevel intra;                  // NVLink / NVSwitch within a node
  std::optional<LinkLevel> inter;   // the network between nodes; absent for a single-node machine
  // Not part of the price: NCCL's channels, one thread block each, so the SMs a collective's kernel holds while it
  // runs (hw/collective_op.h). NCCL picks the count per machine at init (src/graph/search.cc and connect.cc);
  // published NCCL_DEBUG=INFO logs of Hopper machines show 16 "coll channels" (8 H800 on NVLink: NVIDIA/nccl#892)
  // and 24 (H20s over the network: NVIDIA/nccl#1781); no H100 NVLink log was found. 16 when the file does not say.
  int channels = 16;
};

// The machine's shape (the hardware file's `node:` section): GPUs of one NVLink/NVSwitch domain, and how many such
// nodes the cluster has (0: as many as a layout asks for).
struct NodeSpec {
  int gpus_per_node = 1;
  int max_nodes = 0;
};

struct CollectiveCost {
  CollectiveAlgo algo = CollectiveAlgo::Ring;  // the algorithm priced (never Auto)
  double alpha_s = 0;        // the size-independent part
  double time_s = 0;         // alpha + bytes / algbw
  double algbw = 0;          // bytes / (time - alpha): the asymptotic algorithm bandwidth, bytes/s
  double busbw = 0;          // algbw x the collective's bus factor, bytes/s
};

// NCCL's bus-bandwidth factor of `kind` over n ranks: 2(n-1)/n, (n-1)/n or 1.
double bus_factor(CollectiveKind kind, int ranks);
// The graph op kind that runs a collective (workloads/op_kind.h).
OpKind collective_op_kind(CollectiveKind k);

// The cost of one collective of `bytes` over `ranks` GPUs of nodes of `gpus_per_node`: up to gpus_per_node ranks
// share one node, more fill whole nodes (ranks a multiple of gpus_per_node).
// Throws std::invalid_argument for fewer than 2 ranks (a collective over one rank moves nothing: the caller
// skips it), more ranks than a whole number of nodes, several nodes without `inter`, a tree for anything but
// all-reduce, or an interconnect with a non-positive rate, a negative latency or an efficiency outside (0, 1].
// 0 bytes costs nothing (NCCL returns at once).
CollectiveCost collective_cost(const Interconnect& net, CollectiveKind kind, uint64_t bytes, int ranks,
                               int gpus_per_node, CollectiveAlgo algo = CollectiveAlgo::Auto);

}  // namespace dlsim
