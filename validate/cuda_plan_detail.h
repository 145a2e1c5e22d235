#pragma once
// Helpers shared by the translation plan's files (cuda_plan*.cc): finding an op's roles in the Graph and
// failing with a ConfigError that names the op. Internal to validate/.
#include <initializer_list>
#include <string>
#include <vector>

#include "validate/cuda_plan.h"

namespace dlsim::plan_detail {

// Everything that can go wrong while mapping one op names the op (and the graph) in a ConfigError.
[[noreturn]] void fail(const Graph& g, const Op& op, const std::string& msg);

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

// An attribute under the first of its spellings that is present; a missing one is an error, not a default.
int64_t attr(const Graph& g, const Op& op, std::initializer_list<const char*> names);
int64_t attr_or(const Op& op, std::initializer_list<const char*> names, int64_t fallback);

// The 4-d cuDNN view of a tensor: NCHW as is, (N, C) as (N, C, 1, 1), (N, C, L) as (N, C, L, 1), other as a row.
std::vector<int64_t> dims4(const Tensor& t);
// The common data type of one library call's tensors; mixed types are an error naming the odd tensor.
DType same_dtype(const Graph& g, const Op& op, std::initializer_list<TensorId> ids);

void add_step(KernelPlan& kp, KernelCall call, KernelArgs args, int64_t elements = 0);
// Row-major element strides of a shape.
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape);
// The map reading `in` (broadcast to `out` by numpy's rules) at each output coordinate; empty when equal.
NdMap broadcast_map(const Graph& g, const Op& op, const std::vector<int64_t>& in, const std::vector<int64_t>& out);

// Per family of ops (each fills kp.lib, kp.dtype and the steps).
void plan_conv(const Graph& g, const Op& op, KernelPlan& kp);
void plan_batch_norm(const Graph& g, const Op& op, KernelPlan& kp);
void plan_activation(const Graph& g, const Op& op, KernelPlan& kp);
void plan_pool(const Graph& g, const Op& op, KernelPlan& kp);
void plan_softmax(const Graph& g, const Op& op, KernelPlan& kp);
void plan_linear(const Graph& g, const Op& op, KernelPlan& kp);
void plan_matmul(const Graph& g, const Op& op, KernelPlan& kp);
void plan_ours(const Graph& g, const Op& op, KernelPlan& kp);
void plan_other(const Graph& g, const Op& op, KernelPlan& kp);  // OpKind::Other by its attributes

}  // namespace dlsim::plan_detail
