#pragma once
// The training graph: ops and the tensors they read and write, with a Boost.Graph view of the op DAG.
// Ops are stored in a valid issue order (forward, backward, optimizer); the DAG view is for analyses
// (topological checks, independent-op detection for concurrency policies).
#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

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

// What an op computes. Backward ops are distinct kinds so that a backend can pick the right kernel.
enum class OpKind : uint16_t {
  // forward
  Conv2d, BatchNorm, Relu, Relu6, MaxPool, AvgPool, GlobalAvgPool, AdaptiveAvgPool, Linear, MatMul, Add, Mul,
  Concat, Flatten, Reshape, Transpose, Dropout, Pad, Softmax, LayerNorm, Gelu, Embedding, CrossEntropyLoss,
  // decoder-only LLMs (workloads/llama_models.h): RMSNorm, rotary embedding, grouped-query attention's K/V repeat,
  // SiLU, and FlashAttention (scaled dot-product attention that keeps no scores matrix)
  RmsNorm, Rotary, RepeatKv, Silu, FlashAttention,
  // backward
  Conv2dBwdData, Conv2dBwdFilter, BatchNormBwd, ReluBwd, MaxPoolBwd, AvgPoolBwd, LinearBwdData,
  LinearBwdWeight, MatMulBwd, MulBwd, ConcatBwd, DropoutBwd, PadBwd, SoftmaxBwd, LayerNormBwd, GeluBwd,
  EmbeddingBwd, CrossEntropyLossBwd, GradAccumulate, RmsNormBwd, RotaryBwd, RepeatKvBwd, SiluBwd, FlashAttentionBwd,
  // optimizer and others
  SgdMomentumUpdate, AdamUpdate, ZeroGrad, Copy, Other,
};
const char* to_string(OpKind k);

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

// Integer attributes of an op (kernel size, stride, padding, groups, axis...), by name.
class Attrs {
 public:
  void set(const std::string& k, int64_t v) { a_[k] = v; }
  int64_t get(const std::string& k, int64_t fallback = 0) const {
    auto it = a_.find(k);
    return it == a_.end() ? fallback : it->second;
  }
  bool has(const std::string& k) const { return a_.count(k) != 0; }
  const std::map<std::string, int64_t>& all() const { return a_; }

 private:
  std::map<std::string, int64_t> a_;
};

struct Op {
  OpId id = -1;
  std::string name;
  OpKind kind = OpKind::Other;
  Phase phase = Phase::Forward;
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
  TensorId workspace = kNoTensor;  // scratch (cuDNN workspace): allocated right before the op, freed right after
  double flops = 0;                // floating-point operations (a multiply-add counts as 2)
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  Attrs attrs;
  OpId forward_op = -1;  // for a backward op: the forward op it differentiates
  // For a forward op: the index in Graph::blocks of the model block it belongs to (a ResNet basic or bottleneck
  // block, a transformer layer), as the model's builder declared it; -1: none (stem, head, backward, optimizer).
  int32_t block = -1;
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
