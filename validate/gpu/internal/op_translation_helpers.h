#pragma once
// Helpers shared by the translation plan's files (validate/gpu/op_translation*.cc): finding an op's roles in the Graph,
// failing with a ConfigError that names the op, building kernel steps, and the per-family planners the
// dispatcher (op_translation.cc translate_op) calls. Internal to validate/gpu/: DO NOT INCLUDE from outside it.
#include <initializer_list>
#include <string>
#include <vector>

#include "validate/gpu/library_calls.h"

namespace dlsim::validate_internal {

// Everything that can go wrong while mapping one op names the op (and the graph) in a ConfigError.
[[noreturn]] void fail(const Graph& g, const Op& op, const std::string& msg);

// A tensor's element count: its shape's (workloads/shape.h), or for a tensor without a shape (a buffer the
// builders size in bytes) its bytes over the element size.
int64_t numel(const Tensor& t);
// A graph tensor as a call's operand; a side buffer (a role the graph does not hold) of `bytes`.
Arg arg(const Graph& g, TensorId id);
Arg side(uint64_t bytes, DType d = DType::F32);
std::vector<Arg> args_of(const Graph& g, const std::vector<TensorId>& ids);
bool contains(const std::vector<TensorId>& v, TensorId id);

// The first of `ids`, other than `exclude`, whose shape is `shape`; kNoTensor when none.
TensorId find_shaped(const Graph& g, const std::vector<TensorId>& ids, const std::vector<int64_t>& shape,
                     const std::vector<TensorId>& exclude = {});
// The skip-th tensor of `ids` of `kind` (and rank, unless 0).
TensorId first_of_kind(const Graph& g, const std::vector<TensorId>& ids, TensorKind kind, size_t rank = 0,
                       int skip = 0);

const Op& forward_of(const Graph& g, const Op& op);
TensorId need_in(const Graph& g, const Op& op, size_t i);
TensorId need_out(const Graph& g, const Op& op, size_t i);
TensorId require(const Graph& g, const Op& op, TensorId id, const std::string& role);
// The gradient of the forward's output among a backward op's inputs: the input of that shape that is neither
// the forward's input nor its output nor one of `also_not`.
TensorId output_grad(const Graph& g, const Op& op, const Op& fwd, const std::vector<TensorId>& also_not = {});

// An attribute the op must carry (workloads/op_attributes.h spells each one way), or a list attribute's element: a
// missing one is an error naming the op, not a default.
int64_t attr(const Graph& g, const Op& op, Attr a);
int64_t attr(const Graph& g, const Op& op, Attr a, size_t index);

// The 4-d cuDNN view of a tensor: NCHW as is, (N, C) as (N, C, 1, 1), (N, C, L) as (N, C, L, 1), other as a row.
std::vector<int64_t> dims4(const Tensor& t);
// The common data type of one library call's tensors; mixed types are an error naming the odd tensor.
DType same_dtype(const Graph& g, const Op& op, std::initializer_list<TensorId> ids);

void add_step(OpTranslation& kp, KernelCall call, KernelArgs args, int64_t elements = 0);
// Row-major element strides of a shape.
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape);
// The map reading `in` (broadcast to `out` by numpy's rules) at each output coordinate; empty when equal.
NdMap broadcast_map(const Graph& g, const Op& op, const std::vector<int64_t>& in, const std::vector<int64_t>& out);

// Kernel steps. Row-wise kernels (layer norm, cross entropy) work over the last dimension.
void set_rows(KernelStep& s, const Tensor& t);
KernelStep step(KernelCall call, KernelArgs args, int64_t elements = 0);
KernelStep fill_zero(const Arg& out);
// A contiguous copy of all bytes, or a cast when the types differ (autocast's copies and their backward).
KernelStep copy_or_cast(const Graph& g, const Op& op, TensorId in, TensorId out);
// The map summing a broadcast operand's gradient `full` down to its own shape `to` (reduce_broadcast).
NdMap reduce_map(const Graph& g, const Op& op, const std::vector<int64_t>& full, const std::vector<int64_t>& to);

// Per family of ops (each fills kp.lib, kp.dtype and the steps), one file each.
// cuDNN (op_translation_cudnn.cc):
void translate_conv(const Graph& g, const Op& op, OpTranslation& kp);
void translate_batch_norm(const Graph& g, const Op& op, OpTranslation& kp);
void translate_activation(const Graph& g, const Op& op, OpTranslation& kp);
void translate_pool(const Graph& g, const Op& op, OpTranslation& kp);
void translate_softmax(const Graph& g, const Op& op, OpTranslation& kp);
// cuBLAS (op_translation_blas.cc):
void translate_linear(const Graph& g, const Op& op, OpTranslation& kp);
void translate_matmul(const Graph& g, const Op& op, OpTranslation& kp);
// Our kernels: element-wise arithmetic, dropout, gradient sums and optimizer updates (op_translation_elementwise.cc);
// copies, casts, permutes, pads and concatenation (op_translation_data_movement.cc); layer norm, embedding and cross
// entropy (op_translation_rowwise.cc); OpKind::Other by its attributes (op_translation_other.cc).
void translate_elementwise(const Graph& g, const Op& op, OpTranslation& kp);
void translate_data_movement(const Graph& g, const Op& op, OpTranslation& kp);
void translate_rowwise(const Graph& g, const Op& op, OpTranslation& kp);
void translate_other(const Graph& g, const Op& op, OpTranslation& kp);
// kp.lib = Ours and kp.dtype from the op's first output (else first input): what our kernels' families start with.
void start_ours(const Graph& g, const Op& op, OpTranslation& kp);

}  // namespace dlsim::validate_internal
