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

// The kernels the op launches, or nullopt when the model has no family for it (an optimizer step, a test's
// stand-in kernel). Usually one; a matrix product's backward that computes both operands' gradients is two
// GEMMs; an fp32 NCHW grouped convolution is its cuDNN kernel first, then the layout transposes cuDNN runs
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
// Flash attention over (b, heads, seq, d) tensors; `backward`: the gradients of q, k and v.
KernelShape sdpa_kernel_shape(bool backward, double b, double heads, double seq, double d, bool causal, MathPath path,
                              uint32_t element_bytes);

}  // namespace dlsim
