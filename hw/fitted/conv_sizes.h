#pragma once
// The sizes of a 2-D convolution: what a sweep record holds and what a simulated convolution op is read as
// (hw/fitted/op_kernel_shapes.h), and what decides the library PyTorch runs it in (hw/fitted/conv_backend.h).
#include <cstdint>

namespace dlsim {

struct ConvSizes {
  int64_t n = 1, c = 1, h = 1, w = 1, k = 1, r = 1, s = 1;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation = 1, groups = 1;
  // The activations are NHWC in memory (PyTorch's channels_last, or a 16-bit operand the memory-format pass
  // transposed): decides where PyTorch runs a depthwise convolution (hw/fitted/conv_backend.h).
  bool channels_last = false;
  int64_t out_h() const { return (h + 2 * pad_h - dilation * (r - 1) - 1) / stride_h + 1; }
  int64_t out_w() const { return (w + 2 * pad_w - dilation * (s - 1) - 1) / stride_w + 1; }
};

}  // namespace dlsim
