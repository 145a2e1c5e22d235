#pragma once
// Which kernels PyTorch 2.x runs a 2-D convolution pass in, as aten/src/ATen/native/Convolution.cpp's backend choice
// (_select_conv_backend, read for PyTorch 2.11) decides it, and what cuDNN adds around it. The fitted kernel model
// (hw/fitted/kernel_shape.h) gives each library's kernels a class of their own, because their speeds differ by an
// order of magnitude on the same shape: on the H200 a 7x7 depthwise weight gradient of ConvNeXt-T takes 280 µs in
// cuDNN's grouped kernels (wgrad2d_grouped_direct_kernel, TF32 implicit GEMM) where PyTorch's own kernel takes tens.
//
// Depthwise (groups = input channels > 1, output channels a multiple of them): PyTorch's own conv_depthwise2d
// kernels unless use_cudnn_depthwise says cuDNN, which it does
//   - always when the convolution's suggested memory format is channels_last (the input or the filter strided
//     NHWC; ConvNeXt's blocks are, after the permutes around their LayerNorm and Linear layers), any dtype;
//   - for fp16 NCHW (not bf16, not fp32) only for undilated, square-strided convolutions of at least 32 channels
//     whose shape passes check_cudnn_depthwise_workload_with_filter: a square 1x1, 3x3 or 5x5 filter, width >= 7,
//     stride 1 always, stride 2 only for some channel counts, widths and batches (conv_library spells them out).
// Every other convolution (1x1, spatial, grouped) runs in cuDNN.
// Handed fp32 NCHW tensors, cuDNN 9 runs a grouped (not depthwise) convolution in its NHWC kernels and transposes
// around each pass: the activation and filter operands to NHWC before the kernel (nchwToNhwcKernel), the result
// back after it (nhwcToNchwKernel); the 2026-11-28 H200 traces show three transposes per pass on RegNetY-800MF and
// ResNeXt-50 (161 and 294 a step). 16-bit NCHW convolutions' transposes are the graph's own ops already
// (workloads/memory_format.h), so they are not counted here again.
//
// Within cuDNN, a depthwise convolution runs in kernels made for it (one input and one output channel per group:
// conv2d_c1_k1_nhwc, dgrad2d_c1_k1_nhwc_specialized, cuDNN's depthwise wgrad kernels), except where cuDNN has none
// for the shape and falls back to its general grouped kernels, 3-25 times slower per flop. The case the
// measurements show: the fp32 (TF32 or CUDA-core) weight gradient of a 7x7 filter. ConvNeXt-T's, on the H200 with
// cuDNN 9.19 (results/fidelity/data/h200-2026-11-28b and -28c, traces.tar, convnext_tiny-b32.json.gz): forward
// conv2d_c1_k1_nhwc and backward-data dgrad2d_c1_k1_nhwc_specialized at every stage, but the weight gradient in
// sm80_xmma_wgrad_implicit_gemm_indexed_tf32..._g16 (56x56 and 28x28, with two tensorTransformGeneric around it)
// or wgrad2d_grouped_direct_kernel (14x14 and 7x7); kernels-grouped.json times those at 0.31-0.41 TFLOP/s, where
// the fp32 NHWC 3x3 and 5x5 depthwise weight gradients of MobileNet-V2/V3, EfficientNet-B0 and ShuffleNet-V2 of as
// much work (100 MFLOP or more) reach 0.94-5.1 and the fp16 NHWC 7x7 ones 3.3-9.6 (a public fp16 profile on an sm86 GPU lists cuDNN's depthwise
// wgrad2d_c1_k1_nhwc_kernel for __half 3x3, 5x5 and 7x7 filters). cuDNN 8.0's release notes, as quoted in
// tensorflow/tensorflow#40303, extended the NHWC depthwise fprop and dgrad kernels, not wgrad, to 5x5 and 7x7.
// So a 16-bit depthwise pass, an fp32 forward or backward-data one, and an fp32 weight gradient of a square filter
// up to 5x5 keep the depthwise class; an fp32 weight gradient of any other filter (7x7 measured; larger or oblong
// ones assumed alike) is priced as cuDNN's grouped fallback (ConvVariant::CudnnDepthwiseGrouped).
#include <vector>

#include "hw/fitted/conv_sizes.h"
#include "hw/fitted/kernel_shape.h"

namespace dlsim {

enum class ConvLibrary : uint8_t { Cudnn, TorchDepthwise };

// groups = input channels > 1 with output channels a multiple of them (PyTorch's is_depthwise).
bool is_depthwise_conv(const ConvSizes& z);
// The library PyTorch runs the convolution in; `path` tells fp16 from bf16 and fp32 (TF32 or CUDA cores).
ConvLibrary conv_library(const ConvSizes& z, MathPath path);
// The fitted kernel class's variant of one pass (KernelFamily::ConvFwd, ConvDgrad or ConvWgrad) of the
// convolution: for ungrouped ones few-channel (under 8 input channels, any filter), else 1x1 / spatial, unaligned
// where an fp32 NCHW plane is not a multiple of 4 elements (hw/fitted/kernel_shape.h says why); grouped, PyTorch's
// depthwise kernels, cuDNN's depthwise kernels or cuDNN's grouped fallback for a depthwise shape it has no kernel
// for. The sweep fit and the simulated ops both take a convolution's class from here (hw/fitted/op_kernel_shapes.h).
ConvVariant conv_variant(KernelFamily pass, const ConvSizes& z, MathPath path);
// The layout transposes cuDNN runs around one pass of the convolution, as memory-bound (elementwise) kernels that
// read and write their tensor once; none where cuDNN runs it in the tensors' own layout.
std::vector<KernelShape> conv_layout_transposes(KernelFamily pass, const ConvSizes& z, MathPath path,
                                                uint32_t element_bytes);
// The bias's kernels, which PyTorch runs outside the convolution's library call (aten/src/ATen/native/Convolution.cpp,
// read for 2.11; "cuDNN convolutions does not handle bias", cudnn/ConvShared.cpp): the forward adds the bias to
// cuDNN's result in place (`output.add_(bias)`: an elementwise kernel reading and writing the output; PyTorch's own
// depthwise kernels add it inside theirs), and convolution_backward sums the output's gradient over the batch and
// the pixels for the bias's gradient (a reduction kernel, whichever library ran the convolution). The H200 traces
// time them at 2.2 ms of VGG-16's 26 ms step and 1.0 ms of SqueezeNet 1.1's 7.4 (results/fidelity.md). `pass`:
// ConvFwd (the add) or ConvWgrad (the sum); none for ConvDgrad.
std::vector<KernelShape> conv_bias_kernels(KernelFamily pass, const ConvSizes& z, MathPath path, DType dtype);

}  // namespace dlsim
