#pragma once
// Which arithmetic units an op's kernel runs on, and the peak rate it can reach there. A GPU file states the
// tensor-core data types the GPU has by listing their rates under peak_tflops (a V100 lists fp16 only); an op
// asking for a type the GPU lacks runs the way the libraries run it there, and the run says so
// (precision_warnings).
#include <string>
#include <vector>

#include "hw/gpu_spec.h"
#include "workloads/graph.h"

namespace dlsim {

// MathPath (CUDA cores, TF32, fp16 or bf16 tensor cores) is declared in hw/gpu_spec.h, whose calibrated factors
// name the path they were measured on.

// Convolutions, matrix products and FlashAttention (forward and backward) can use tensor cores; everything else runs on CUDA
// cores (PyTorch's elementwise and reduction kernels compute in fp32 even for 16-bit tensors).
bool is_matrix_op(OpKind k);
bool is_convolution(OpKind k);

// The data type an op computes in: its first floating-point input, else its first floating-point output,
// else F32 (under mixed precision a 16-bit activation makes a conv/matmul a 16-bit kernel).
DType compute_dtype(const Graph& g, const Op& op);

// Whether an fp32 matrix op may use TF32: its attr tf32 when set (workloads/model_builder.cc sets it where the
// experiment's choice differs from PyTorch's default), else PyTorch's default: convolutions yes
// (torch.backends.cudnn.allow_tf32 = True), matmuls no (torch.backends.cuda.matmul.allow_tf32 = False).
bool tf32_allowed(const Op& op);

// The path the op's kernel takes on this GPU:
// - a matrix op in F16 / BF16: that type's tensor cores when the GPU has them, else CUDA cores (PyTorch emulates
//   bf16 arithmetic in fp32 on GPUs without bf16 units; fp16 without tensor cores runs on CUDA cores too);
// - a matrix op in F32: TF32 tensor cores when allowed and present, else CUDA cores (on a V100 PyTorch's TF32
//   flags change nothing);
// - every other op: CUDA cores.
MathPath math_path(const GpuSpec& spec, const Graph& g, const Op& op);

// The peak FLOP/s of a path on this GPU (CUDA cores: peak_tflops.fp32).
double path_peak(const GpuSpec& spec, MathPath p);

// One line per precision choice of the graph that this GPU cannot honour, saying what runs instead (as the
// library does), e.g. "v100-sxm2-16gb has no bf16 tensor cores: ...". Empty when everything runs as asked.
std::vector<std::string> precision_warnings(const GpuSpec& spec, const Graph& g);

}  // namespace dlsim
