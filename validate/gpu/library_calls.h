#pragma once
// The library calls (cuDNN, cuBLAS, or a small kernel of ours) that run one op on the real GPU, with their
// descriptor shapes and operands: what validate/gpu/op_translation.h produces and dlsim-cuda executes.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/graph.h"

namespace dlsim {

enum class KernelLib : uint8_t { Cudnn, Cublas, Ours };
const char* to_string(KernelLib l);

// What the executor launches. One op may take several calls (a GEMM and a bias kernel...).
enum class KernelCall : uint8_t {
  ConvForward, ConvBackwardData, ConvBackwardFilter, ConvBackwardBias, AddTensor,    // cuDNN
  BatchNormForwardTraining, BatchNormBackward,                                         // cuDNN
  ActivationForward, ActivationBackward, PoolingForward, PoolingBackward,              // cuDNN
  SoftmaxForward, SoftmaxBackward,                                                     // cuDNN
  Gemm, GemmStridedBatched,                                                            // cuBLAS
  ElementwiseBinary, ElementwiseUnary, ElementwiseUnaryBackward, BiasAdd, BiasGrad,    // ours
  Copy, Fill, LayerNormForward, LayerNormBackward, EmbeddingForward, EmbeddingBackward,
  CrossEntropyForward, CrossEntropyBackward, SgdMomentum, Adam, MemoryBound,
  // added for the zoo's remaining ops
  Pool2dForward, Pool2dBackward,  // ours: PyTorch's pooling where cuDNN's floor rule cannot give the shape
  LrnForward, LrnBackward,        // cuDNN cross-channel LRN
  Gather,                         // ours: out[i] = in[map(i)], zero where the map falls outside (permute, pad, crop)
  ReduceBroadcast,                // ours: the gradient of a broadcast operand, summed down to its shape
  LayerNormParamGrad,             // ours: dgamma, dbeta column sums (PyTorch's GammaBetaBackward)
};
const char* to_string(KernelCall c);  // the library function's name, e.g. "cudnnConvolutionForward"

// Which element-wise function a small kernel of ours (or cuDNN's activation) computes.
// Cast converts between the operands' data types (autocast's copies); Tanh and TanhBwd (saved = y) serve the
// BERT pooler; GeluTanh is GPT-2's tanh approximation, which no graph asks for yet (the builders' GELU is the
// erf form, GPT-2's included).
enum class Pointwise : uint8_t { None, Add, Mul, MulBwd, Relu, Relu6, Gelu, Dropout, Sum, Cast, Tanh, GeluTanh };

struct ConvShape {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input x (NCHW)
  int64_t k = 0, r = 0, s = 0;         // filters: k x (c/groups) x r x s
  int64_t p = 0, q = 0;                // output height and width
  int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, groups = 1;
  bool bias = false;
  // How the operands lie in memory: NHWC (PyTorch's channels_last, attr channels_last) for x, y and the filters
  // alike, else NCHW. The shape fields above stay logical NCHW either way.
  bool channels_last = false;
  bool tf32 = true;  // an fp32 convolution may run on TF32 tensor cores (attr tf32: cudnn.allow_tf32)
};

struct PoolShape {
  int64_t n = 0, c = 0, h = 0, w = 0, p = 0, q = 0;
  int64_t win_h = 0, win_w = 0, pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1;
  bool max = true;
  bool include_pad = true;  // average pooling: divide by the window including padding (PyTorch's default)
  // PyTorch's ceil_mode gave an output cuDNN's floor rule cannot produce (one more row or column whose window
  // hangs over the bottom/right edge): a kernel of ours (Pool2dForward/Backward) with PyTorch's window rule.
  bool ceil_mode = false;
  bool adaptive = false;  // adaptive average pooling whose output does not divide the input (ours as well)
};

// Column-major cuBLAS view of a row-major product C[m x n] = A[m x k] * B[k x n] (possibly transposed operands),
// computed as C^T = B^T A^T so that no transposition is materialised.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;  // of the row-major A and B
  int64_t batch = 1;
};

// Roles of a call's tensors, resolved from the Graph (never by position alone): x, w, y, dx, dw, dy...
// A role the Graph does not hold as a tensor (cuDNN's running mean of a batch norm, a max-pool backward's y...)
// has id kNoTensor and its size in bytes: the executor gives it a side buffer outside the pool.
struct Arg {
  TensorId id = kNoTensor;
  uint64_t bytes = 0;
  DType dtype = DType::F32;  // our kernels read and write each operand in its own type (autocast mixes them)
};
// How output element coordinates reach an input's elements. Output coordinate c_d along `dims` reads input
// coordinate c_d - shift_d, valid when 0 <= c_d - shift_d < bound_d (else it reads zero: padding), at element
// offset sum_d (c_d - shift_d) * strides_d. A permutation permutes strides, a broadcast axis has stride 0, a pad
// shifts by its begin, a crop by minus it. ReduceBroadcast reads it the other way: `dims` are the input's
// (the full gradient's) dims and `bound` the output's, aligned, 1 on the summed axes.
constexpr size_t kMaxRank = 6;
struct NdMap {
  std::vector<int64_t> dims, strides, shift, bound;
  bool empty() const { return dims.empty(); }
};

struct KernelArgs {
  std::vector<Arg> in;
  std::vector<Arg> out;
};

struct KernelStep {
  KernelCall call = KernelCall::MemoryBound;
  KernelArgs args;
  Pointwise fn = Pointwise::None;
  int64_t elements = 0;  // element-wise kernels: elements of the output; copies: bytes
  int64_t rows = 0, cols = 0;  // row-wise kernels (softmax, layer norm, cross entropy, bias, embedding)
  double alpha = 1.0, beta = 0.0;  // cuDNN/cuBLAS scaling (beta = 1: accumulate into the output)
  GemmShape gemm;
  // Copy: `rows` rows of `cols` bytes from in[0]+src_offset (row pitch src_pitch) to out[0]+dst_offset.
  int64_t src_offset = 0, src_pitch = 0, dst_offset = 0, dst_pitch = 0;
  // Element maps (at most kMaxRank axes) for Gather, broadcast ElementwiseBinary and ReduceBroadcast; empty
  // when the operands are dense and of the output's shape.
  NdMap map_a, map_b;
};

struct OpTranslation {
  OpId op = -1;
  KernelLib lib = KernelLib::Ours;
  DType dtype = DType::F32;      // compute and storage type of the op's main tensors
  bool needs_workspace = false;  // a cuDNN convolution: algorithm chosen at setup, workspace through the pool
  ConvShape conv;                // convolutions
  PoolShape pool;                // pooling
  int64_t lrn_size = 0;          // LRN: channels in the window (cuDNN's lrnN)
  std::vector<int64_t> x_dims;   // the 4-d cuDNN descriptor of the op's main input (NCHW), when cuDNN runs it
  std::vector<int64_t> y_dims;   // ... and of its main output
  std::vector<KernelStep> steps;
  std::string describe() const;  // one line: "op 3 conv1: cudnnConvolutionForward x[32,3,224,224] ..."
};

}  // namespace dlsim
