#pragma once
// The training graph: ops and the tensors they read and write, with a Boost.Graph view of the op DAG.
// Ops are stored in a valid issue order (forward, backward, optimizer); the DAG view is for analyses
// (topological checks, independent-op detection for concurrency policies).
#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "workloads/op_attributes.h"
#include "workloads/op_kind.h"
#include "workloads/shape.h"

namespace dlsim {

using TensorId = int32_t;
using OpId = int32_t;
constexpr TensorId kNoTensor = -1;

enum class DType : uint8_t { F32, BF16, F16, I64, I32, U8, Bool };
uint32_t dtype_bytes(DType t);
const char* to_string(DType t);

enum class TensorKind : uint8_t { Weight, Gradient, OptimizerState, Activation, Workspace, Input };
const char* to_string(TensorKind k);

enum class Phase : uint8_t { Forward, Backward, Optimizer };
const char* to_string(Phase p);

struct Tensor {
  TensorId id = kNoTensor;
  std::string name;
  TensorKind kind = TensorKind::Activation;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
  // Allocated once before the first iteration and never freed (weights, optimizer state, ...).
  bool persistent = false;
  // A model parameter (what PyTorch's model.parameters() yields), whether or not the loss reaches it;
  // batch-norm running statistics are persistent weights but not learnable.
  bool learnable = false;
  // For a gradient: the tensor it is the gradient of (an activation's gradient carries the batch, a weight's
  // does not; hw/batch_signature.h). kNoTensor otherwise.
  TensorId grad_of = kNoTensor;
};

// An op's attribute values by stored name (workloads/op_attributes.h), in name order: the order kernel signatures
// and program files write them in. Only Op's accessors change them, after checking the op's declaration; a copy
// (a backward op takes its forward op's) is unchecked, and op_attributes_test.cc checks those the synthesis makes.
class Attrs {
 public:
  const std::map<std::string, int64_t>& by_name() const { return a_; }
  bool empty() const { return a_.empty(); }

 private:
  friend struct Op;
  std::map<std::string, int64_t> a_;
};

struct Op {
  OpId id = -1;
  std::string name;
  OpKind kind = OpKind::Other;
  // What an Other op computes; OtherOp::None for other kinds, but a gradient accumulation carries the sub-kind of
  // the forward op it follows with that op's attributes.
  OtherOp other = OtherOp::None;
  Phase phase = Phase::Forward;
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
  TensorId workspace = kNoTensor;  // scratch (cuDNN workspace): allocated right before the op, freed right after
  double flops = 0;                // floating-point operations (a multiply-add counts as 2)
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  OpId forward_op = -1;  // for a backward op: the forward op it differentiates
  // For a forward op: the index in Graph::blocks of the model block it belongs to (a ResNet basic or bottleneck
  // block, a transformer layer), as the model's builder declared it; -1: none (stem, head, backward, optimizer).
  int32_t block = -1;
  // Integer attributes (kernel size, stride, axis, flags...): which ones an op may carry, and their defaults, are
  // declared per kind in workloads/op_attributes.cc. The accessors throw std::logic_error for an attribute the op's
  // kind and sub-kind do not declare, so that a misspelt or misplaced attribute fails where it is set or read.
  Attrs attrs;
  int64_t attr(Attr a) const;   // the value, else the declared default; an error when it has neither
  bool has_attr(Attr a) const;  // whether the op sets it (a default does not count)
  void set_attr(Attr a, int64_t value);
  // A list attribute's elements (perm, pad_begin, pad_end): one by index, or all of 0, 1, ... that are set.
  int64_t attr(Attr a, size_t index) const;
  bool has_attr(Attr a, size_t index) const;
  void set_attr(Attr a, size_t index, int64_t value);
  std::vector<int64_t> attr_list(Attr a) const;
  void set_attr_list(Attr a, const std::vector<int64_t>& values);
  // Whether the op's kind declares `a` at all (for a reader that serves several kinds).
  bool declares(Attr a) const;
  // Every attribute as kernel signatures and program files write it: by stored name, in name order, with an Other
  // sub-kind written as the attribute `<sub-kind>=1` (select=1, lrn=1), as these files have always spelled it.
  std::map<std::string, int64_t> written_attributes() const;
};

class Graph {
 public:
  using Dag = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

  std::string name;
  int64_t batch = 0;
  // The model's own blocks in forward order, by module path ("layer1.0", "encoder.layer.3"): what activation
  // checkpointing segments (policies/swap/checkpoint/checkpoint_swap.h). Empty for a model without a block structure (VGG,
  // an ONNX import). Op::block indexes it.
  std::vector<std::string> blocks;
  // Where a recomputation's replayed op reads another tensor than its forward op read: X -> Y. FSDP with
  // reshard_after_forward sets gathered -> regathered parameter (parallel/fsdp_graph.cc): as under FSDP2 with
  // activation checkpointing, the recomputation runs inside the unit's backward, after its all-gather. Empty: a
  // replay reads what the forward op read.
  std::map<TensorId, TensorId> replay_source;
  // An op's inputs as a replay of it reads them (replay_source applied).
  std::vector<TensorId> replay_inputs(const Op& op) const;

  TensorId add_tensor(Tensor t);  // assigns the id
  OpId add_op(Op o);              // assigns the id; appends to the issue order

  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<Op>& ops() const { return ops_; }
  Tensor& tensor(TensorId id) { return tensors_.at(static_cast<size_t>(id)); }
  const Tensor& tensor(TensorId id) const { return tensors_.at(static_cast<size_t>(id)); }
  Op& op(OpId id) { return ops_.at(static_cast<size_t>(id)); }
  const Op& op(OpId id) const { return ops_.at(static_cast<size_t>(id)); }

  // Op DAG: an edge u -> v when v reads or overwrites a tensor that u writes (data dependence),
  // or v overwrites a tensor that u reads (anti-dependence). Vertex i is op i.
  Dag dag() const;

 private:
  std::vector<Tensor> tensors_;
  std::vector<Op> ops_;
};

}  // namespace dlsim
