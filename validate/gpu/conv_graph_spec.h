#pragma once
// A convolution as cuDNN's graph API sees it: one operation (forward, backward-data or backward-filter) over three
// tensors given by dimensions, strides, data type, byte alignment and unique id, and a convolution descriptor
// (compute type, padding, strides, dilations). dlsim-cuda's graph path (validate/gpu/cuda/cudnn_graph_conv.h)
// turns it into backend descriptors; it is a pure function of the op translation so that CI, without cuDNN,
// tests what will be asked of the library.
//
// As PyTorch 2.x describes its convolutions (aten/src/ATen/native/cudnn/Conv_v8.cpp, read, not copied): the
// tensors keep their logical NCHW dimensions (KCRS for the filters), the memory format goes into the strides
// (channels_last: C innermost, for the filters too); grouped convolutions are not flagged, cuDNN infers the groups
// from the filter's channel count; the compute type is fp32 for fp32, fp16 and bf16 data alike; padding is
// symmetric (pre = post); the alignment is the one PyTorch finds on its caching allocator's 512-byte blocks,
// 32 bytes (the harness's pools and cudaMalloc give at least 256; the launch checks the pointers).
#include <array>
#include <cstdint>
#include <string>

#include "validate/gpu/library_calls.h"

namespace dlsim {

enum class ConvPass : uint8_t { Forward, BackwardData, BackwardFilter };
const char* to_string(ConvPass p);  // "fwd", "bwd_data", "bwd_filter"

// One of the operation's three tensors. For the backward passes the roles keep the forward's names: x is dx for
// backward-data, w is dw for backward-filter, y is always (d)y.
struct ConvTensorSpec {
  int64_t uid = 0;
  std::array<int64_t, 4> dims{};     // N, C, H, W (filters: K, C/groups, R, S)
  std::array<int64_t, 4> strides{};  // elements, in the same order
  DType dtype = DType::F32;
  int64_t alignment = 32;  // bytes
};

struct ConvGraphSpec {
  ConvPass pass = ConvPass::Forward;
  ConvTensorSpec x, w, y;
  DType compute = DType::F32;
  std::array<int64_t, 2> pre_pad{}, post_pad{}, stride{}, dilation{};
  // Whether engines whose numerical notes say they run on tensor cores stay candidates (PyTorch drops them only
  // for fp32 with allow_tf32 off).
  bool allow_tensor_cores = true;
  float alpha = 1.f, beta = 0.f;
  // Everything above, as one line: the plan cache's key (two ops with equal keys share one execution plan, as
  // PyTorch's cache shares one per shape) and the report's description.
  std::string key() const;
};

// The unique ids the variant pack binds: PyTorch's 'x', 'y', 'w'.
inline constexpr int64_t kConvUidX = 'x', kConvUidY = 'y', kConvUidW = 'w';

// The spec of the call at `step` of a convolution's translation (ConvForward, ConvBackwardData or
// ConvBackwardFilter); throws std::invalid_argument for any other call or a translation that is no convolution.
ConvGraphSpec conv_graph_spec(const OpTranslation& t, size_t step);

// Strides of a dense 4-d tensor of logical dims (N, C, H, W) in NCHW or NHWC memory order.
std::array<int64_t, 4> dense_strides(const std::array<int64_t, 4>& dims, bool channels_last);

// Which of a step's operands is the spec's x, w and y: {in or out, slot} per role, in the order x, w, y.
struct ConvOperand {
  bool out = false;
  size_t slot = 0;
};
std::array<ConvOperand, 3> conv_operands(ConvPass p);

}  // namespace dlsim
