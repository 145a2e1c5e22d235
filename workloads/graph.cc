#include "workloads/graph.h"

#include <algorithm>

namespace dlsim {

uint32_t dtype_bytes(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::BF16: return 2;
    case DType::F16: return 2;
    case DType::I64: return 8;
    case DType::I32: return 4;
    case DType::U8: return 1;
    case DType::Bool: return 1;
  }
  return 0;
}

const char* to_string(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::BF16: return "bf16";
    case DType::F16: return "f16";
    case DType::I64: return "i64";
    case DType::I32: return "i32";
    case DType::U8: return "u8";
    case DType::Bool: return "bool";
  }
  return "?";
}

const char* to_string(TensorKind k) {
  switch (k) {
    case TensorKind::Weight: return "weight";
    case TensorKind::Gradient: return "gradient";
    case TensorKind::OptimizerState: return "optimizer_state";
    case TensorKind::Activation: return "activation";
    case TensorKind::Workspace: return "workspace";
    case TensorKind::Input: return "input";
  }
  return "?";
}

const char* to_string(Phase p) {
  switch (p) {
    case Phase::Forward: return "forward";
    case Phase::Backward: return "backward";
    case Phase::Optimizer: return "optimizer";
  }
  return "?";
}

const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::Conv2d: return "Conv2d";
    case OpKind::BatchNorm: return "BatchNorm";
    case OpKind::Relu: return "Relu";
    case OpKind::Relu6: return "Relu6";
    case OpKind::MaxPool: return "MaxPool";
    case OpKind::AvgPool: return "AvgPool";
    case OpKind::GlobalAvgPool: return "GlobalAvgPool";
    case OpKind::AdaptiveAvgPool: return "AdaptiveAvgPool";
    case OpKind::Linear: return "Linear";
    case OpKind::MatMul: return "MatMul";
    case OpKind::Add: return "Add";
    case OpKind::Mul: return "Mul";
    case OpKind::Concat: return "Concat";
    case OpKind::Flatten: return "Flatten";
    case OpKind::Reshape: return "Reshape";
    case OpKind::Transpose: return "Transpose";
    case OpKind::Dropout: return "Dropout";
    case OpKind::Pad: return "Pad";
    case OpKind::Softmax: return "Softmax";
    case OpKind::LayerNorm: return "LayerNorm";
    case OpKind::Gelu: return "Gelu";
    case OpKind::Embedding: return "Embedding";
    case OpKind::CrossEntropyLoss: return "CrossEntropyLoss";
    case OpKind::Conv2dBwdData: return "Conv2dBwdData";
    case OpKind::Conv2dBwdFilter: return "Conv2dBwdFilter";
    case OpKind::BatchNormBwd: return "BatchNormBwd";
    case OpKind::ReluBwd: return "ReluBwd";
    case OpKind::MaxPoolBwd: return "MaxPoolBwd";
    case OpKind::AvgPoolBwd: return "AvgPoolBwd";
    case OpKind::LinearBwdData: return "LinearBwdData";
    case OpKind::LinearBwdWeight: return "LinearBwdWeight";
    case OpKind::MatMulBwd: return "MatMulBwd";
    case OpKind::MulBwd: return "MulBwd";
    case OpKind::ConcatBwd: return "ConcatBwd";
    case OpKind::DropoutBwd: return "DropoutBwd";
    case OpKind::PadBwd: return "PadBwd";
    case OpKind::SoftmaxBwd: return "SoftmaxBwd";
    case OpKind::LayerNormBwd: return "LayerNormBwd";
    case OpKind::GeluBwd: return "GeluBwd";
    case OpKind::EmbeddingBwd: return "EmbeddingBwd";
    case OpKind::CrossEntropyLossBwd: return "CrossEntropyLossBwd";
    case OpKind::GradAccumulate: return "GradAccumulate";
    case OpKind::SgdMomentumUpdate: return "SgdMomentumUpdate";
    case OpKind::AdamUpdate: return "AdamUpdate";
    case OpKind::ZeroGrad: return "ZeroGrad";
    case OpKind::Copy: return "Copy";
    case OpKind::Other: return "Other";
    case OpKind::RmsNorm: return "RmsNorm";
    case OpKind::Rotary: return "Rotary";
    case OpKind::RepeatKv: return "RepeatKv";
    case OpKind::Silu: return "Silu";
    case OpKind::FlashAttention: return "FlashAttention";
    case OpKind::RmsNormBwd: return "RmsNormBwd";
    case OpKind::RotaryBwd: return "RotaryBwd";
    case OpKind::RepeatKvBwd: return "RepeatKvBwd";
    case OpKind::SiluBwd: return "SiluBwd";
    case OpKind::FlashAttentionBwd: return "FlashAttentionBwd";
  }
  return "?";
}

TensorId Graph::add_tensor(Tensor t) {
  t.id = static_cast<TensorId>(tensors_.size());
  tensors_.push_back(std::move(t));
  return tensors_.back().id;
}

OpId Graph::add_op(Op o) {
  o.id = static_cast<OpId>(ops_.size());
  ops_.push_back(std::move(o));
  return ops_.back().id;
}

// One pass over the ops in issue order, remembering per tensor its last writer and the readers since that
// write: linear in the number of tensor accesses. Edges are deduplicated per target op.
Graph::Dag Graph::dag() const {
  Dag d(ops_.size());
  std::vector<OpId> last_writer(tensors_.size(), -1);
  std::vector<std::vector<OpId>> readers(tensors_.size());
  std::vector<OpId> sources;
  for (const Op& v : ops_) {
    sources.clear();
    for (TensorId t : v.inputs)
      if (last_writer[t] >= 0) sources.push_back(last_writer[t]);
    for (TensorId t : v.outputs) {
      if (last_writer[t] >= 0) sources.push_back(last_writer[t]);
      for (OpId r : readers[t]) sources.push_back(r);
    }
    std::sort(sources.begin(), sources.end());
    sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
    for (OpId u : sources)
      if (u != v.id) boost::add_edge(static_cast<size_t>(u), static_cast<size_t>(v.id), d);
    for (TensorId t : v.outputs) {
      last_writer[t] = v.id;
      readers[t].clear();
    }
    // Reads are recorded after the writes so that an in-place op (reads and writes t) is not its own reader;
    // an op that only reads t is remembered for the anti-dependence of t's next writer.
    for (TensorId t : v.inputs)
      if (std::find(v.outputs.begin(), v.outputs.end(), t) == v.outputs.end()) readers[t].push_back(v.id);
  }
  return d;
}

}  // namespace dlsim
