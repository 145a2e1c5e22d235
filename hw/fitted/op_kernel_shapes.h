#pragma once
// A simulated op as the fitted kernel model sees it (hw/fitted/kernel_shape.h): its kernels' families, paths and
// shapes, read from the op's attributes and tensors as the training synthesis wrote them.
#include <optional>
#include <vector>

#include "hw/fitted/conv_sizes.h"
#include "hw/fitted/kernel_shape.h"
#include "hw/gpu_spec.h"
#include "workloads/graph.h"

namespace dlsim {

// The kernels the op launches, or nullopt when the model has no family for it (a fused optimizer step, a test's
// stand-in kernel). An op charged with multi-tensor launches (the zoo's foreach SGD update, a recorded
// torch._foreach_* op: hw/fitted/multi_tensor.h) is one multi_tensor shape where `spec`'s fitted kernels have its
// class; where they have none, the zoo's update has no family (the roofline's, as before the class) and the
// recorded op is one elementwise kernel. Usually one; a matrix product's backward that computes both operands'
// gradients is two GEMMs; a concatenation is PyTorch's launches (hw/fitted/concat_kernels.h); an fp32 NCHW grouped
// convolution is its cuDNN kernel first, then the layout transposes cuDNN runs
// around it (hw/fitted/conv_backend.h). Convolutions: the input's N, C, H, W from the activation operand
// (NHWC-shaped where the memory-format pass transposed a 16-bit NCHW operand, workloads/memory_format.h), the
// filter and padding from the attributes.
std::optional<std::vector<KernelShape>> op_kernel_shapes(const GpuSpec& spec, const Graph& g, const Op& op);

// A convolution op's sizes (forward, backward-data or backward-filter: the forward's), or nullopt when its
// activation operand is not a 4-D tensor.
std::optional<ConvSizes> conv_sizes_of_op(const Graph& g, const Op& op);
// Its variant follows the library PyTorch runs it in (hw/fitted/conv_backend.h): a depthwise convolution is
// PyTorch's own kernel (ConvVariant::Depthwise), cuDNN's (ConvVariant::CudnnDepthwise), or, for a pass cuDNN has
// no depthwise kernel of, cuDNN's grouped ones (ConvVariant::CudnnDepthwiseGrouped): conv_variant.
KernelShape conv_kernel_shape(KernelFamily pass, const ConvSizes& z, MathPath path, uint32_t element_bytes);
// A (batched) matrix product C[batch, m, n] = A[batch, m, k] B[batch, k, n].
KernelShape gemm_kernel_shape(double batch, double m, double n, double k, MathPath path, uint32_t element_bytes);
// Flash attention over (b, heads, seq, d) tensors; `backward`: the gradients of q, k and v. fp32 attention
// (element_bytes 4) on the TF32 path is PyTorch's memory-efficient kernel (sdpa_path): its flops count the three
// TF32 products each fp32 product takes, so that F = flops / the TF32 peak is the kernel's ideal time.
KernelShape sdpa_kernel_shape(bool backward, double b, double heads, double seq, double d, bool causal, MathPath path,
                              uint32_t element_bytes);
// The path of an SDPA kernel of `dtype` that the op's math_path gives as `requested`. PyTorch runs fp32 SDPA
// through its memory-efficient kernels (cutlass, from xformers; flash takes 16-bit types only), whose matrix
// products on sm80 and later are tensor-core "3xTF32" (cutlass's OpMultiplyAddFastF32: each fp32 operand split
// into a TF32 high and low part, three TF32 MMAs per product, mem_eff_attention/gemm_kernel_utils.h) whatever
// torch.backends.cuda.matmul.allow_tf32 says: the TF32 path where the GPU has TF32 (`has_tf32`), else CUDA cores
// (the kernels' SIMT fallback). Other types: `requested`.
MathPath sdpa_path(MathPath requested, DType dtype, bool has_tf32);
// TF32 products per fp32 product in the memory-efficient kernel's 3xTF32 arithmetic.
inline constexpr double kFastF32Products = 3.0;

}  // namespace dlsim
