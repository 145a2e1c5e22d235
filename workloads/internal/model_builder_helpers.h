#pragma once
// What ModelBuilder's layer files (model_builder_*.cc) share: tensors and ops appended with their byte counts, the
// shape checks every layer makes, and the errors, each naming the model and the layer.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "workloads/graph.h"

namespace dlsim::workloads_internal {

// The wider of two floating types, as PyTorch promotes an add or a concat: fp32 if either is.
DType wider(DType a, DType b);

[[noreturn]] void fail(const Graph& g, const std::string& layer, const std::string& msg);

// A tensor of `shape`, checked: every dimension positive and at most 2^50 bytes (1 PiB) in all.
TensorId new_tensor(Graph& g, const std::string& name, TensorKind kind, DType dt, std::vector<int64_t> shape,
                    bool persistent = false);

// An op's multiply-accumulates; more than an int64 holds is an input error like an oversized tensor.
int64_t checked_macs(const Graph& g, const std::string& op, std::initializer_list<int64_t> factors);

// Attribute values to set on a new op (each checked against its kind's declaration, workloads/op_attributes.h).
using AttrValues = std::vector<std::pair<Attr, int64_t>>;

// Appends a forward op; bytes read and written are the sizes of its inputs and outputs.
OpId emit(Graph& g, const std::string& name, OpKind kind, std::vector<TensorId> in, std::vector<TensorId> out,
          double flops, const AttrValues& attrs = {});
// The same for an op of kind Other and sub-kind `other`.
OpId emit_other(Graph& g, const std::string& name, OtherOp other, std::vector<TensorId> in, std::vector<TensorId> out,
                double flops, const AttrValues& attrs = {});

// `x op c` for a Python scalar c (kind Mul or Add): one input, x's dtype, and nothing kept for backward
// (model_builder_transformer.cc).
TensorId scalar_op(Graph& g, OpKind kind, TensorId x, const std::string& name);

// The shape of an existing tensor, and of an existing NCHW tensor; else an error naming the layer.
const std::vector<int64_t>& shape_of(const Graph& g, TensorId t, const std::string& layer);
const std::vector<int64_t>& shape4(const Graph& g, TensorId t, const std::string& layer);

// The largest kernel, stride, padding or dilation a layer takes: 2^31, as ONNX Runtime's and cuDNN's int
// arguments bound them. Larger values would wrap `in + 2 * pad` (an ONNX file can hold any int64).
constexpr int64_t kMaxLayerSize = int64_t{1} << 31;

// Whether every size is in [1, kMaxLayerSize] and every padding in [0, kMaxLayerSize].
bool layer_sizes_ok(std::initializer_list<int64_t> positive, std::initializer_list<int64_t> non_negative);

// PyTorch's pooling output size, including ceil_mode's rule that the last window must start inside the input
// or the left padding.
int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode);

// numpy broadcasting of two shapes, or an error naming the layer.
std::vector<int64_t> broadcast(const Graph& g, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                               const std::string& layer);

}  // namespace dlsim::workloads_internal
