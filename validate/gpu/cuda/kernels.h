#pragma once
// The small kernels of ours: random inputs, element-wise and broadcast ops, casts, data movement (gather for
// permute/pad/crop, the reduction of a broadcast operand's gradient), row-wise ops (layer norm, cross entropy,
// embedding), PyTorch's pooling where cuDNN cannot give the shape, optimizer updates. Each launcher enqueues
// on `stream` and checks the launch. Every operand says its own element type (autocast mixes fp32 and bf16).
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace dlsim::cuda {

struct Buf {  // a device operand: fp32, or bf16 when `bf16`
  void* p = nullptr;
  bool bf16 = false;
};

// An element map (validate/gpu/op_translation.h NdMap) in a form a kernel takes by value. rank 0: dense, index i.
constexpr int kNdMax = 6;
struct NdDev {
  int rank = 0;
  int64_t dims[kNdMax] = {}, strides[kNdMax] = {}, shift[kNdMax] = {}, bound[kNdMax] = {};
};

// Pooling with PyTorch's window rules (max_pool2d / avg_pool2d with ceil_mode, adaptive_avg_pool2d).
struct PoolDev {
  int64_t n = 0, c = 0, h = 0, w = 0, p = 0, q = 0;
  int64_t win_h = 0, win_w = 0, pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1;
  int mode = 0;  // 0 max, 1 average counting padding, 2 average over valid elements, 3 adaptive average
};

// Random contents, never all zeros: kind 0 fp32 in [-1, 1), 1 bf16 likewise, 2 nonzero random bytes; or
// integers in [0, range) for index tensors.
void fill_random(void* p, uint64_t bytes, int kind, uint64_t seed, cudaStream_t s, const std::string& ctx);
void fill_random_indices(void* p, int64_t count, int64_t range, uint64_t seed, cudaStream_t s, const std::string& ctx);

// out = a (op) b over n output elements, a and b read through their maps (broadcast). fn 0 add, 1 mul.
void binary(int fn, Buf a, const NdDev& ma, Buf b, const NdDev& mb, Buf out, int64_t n, cudaStream_t s,
            const std::string& ctx);
// fn 0 cast (copy with type conversion), 1 gelu (erf), 2 gelu (tanh approximation), 3 tanh, 4 dropout p = 0.5
// (writes the bool mask when given).
void unary(int fn, Buf x, Buf y, void* mask, int64_t n, cudaStream_t s, const std::string& ctx);
// dx from dy and the saved tensor: gelu x, tanh y, dropout the bool mask (saved.p).
void unary_backward(int fn, Buf saved, Buf dy, Buf dx, int64_t n, cudaStream_t s, const std::string& ctx);
void bias_add(Buf b, Buf y, int64_t rows, int64_t cols, cudaStream_t s, const std::string& ctx);
void bias_grad(Buf dy, Buf db, int64_t rows, int64_t cols, cudaStream_t s, const std::string& ctx);
void gather(Buf in, const NdDev& m, Buf out, int64_t n, cudaStream_t s, const std::string& ctx);
void reduce_broadcast(Buf in, const NdDev& m, Buf out, int64_t n_out, cudaStream_t s, const std::string& ctx);
void layer_norm(Buf x, const float* gamma, const float* beta, Buf y, float* mean, float* rstd, int64_t rows,
                int64_t cols, cudaStream_t s, const std::string& ctx);
void layer_norm_backward(Buf x, Buf dy, const float* gamma, const float* mean, const float* rstd, Buf dx,
                         int64_t rows, int64_t cols, cudaStream_t s, const std::string& ctx);
void layer_norm_param_grad(Buf x, Buf dy, const float* mean, const float* rstd, float* dgamma, float* dbeta,
                           int64_t rows, int64_t cols, cudaStream_t s, const std::string& ctx);
void embedding(const int64_t* ids, const float* table, Buf y, int64_t rows, int64_t cols, cudaStream_t s,
               const std::string& ctx);
void embedding_backward(const int64_t* ids, Buf dy, float* dtable, int64_t rows, int64_t cols, cudaStream_t s,
                        const std::string& ctx);
// Mean softmax cross entropy over rows; writes the loss (one float) and the log-probabilities.
void cross_entropy(Buf logits, const int64_t* target, float* loss, float* log_probs, int64_t rows, int64_t cols,
                   cudaStream_t s, const std::string& ctx);
// dlogits = (exp(log_probs) - onehot(target)) / rows
void cross_entropy_backward(const float* log_probs, const int64_t* target, Buf dlogits, int64_t rows, int64_t cols,
                            cudaStream_t s, const std::string& ctx);
void pool2d(const PoolDev& p, Buf x, Buf y, int64_t* indices, cudaStream_t s, const std::string& ctx);
void pool2d_backward(const PoolDev& p, Buf dy, const int64_t* indices, Buf dx, cudaStream_t s, const std::string& ctx);
void sgd_momentum(float* w, const float* g, float* m, int64_t n, cudaStream_t s, const std::string& ctx);
void adam(float* w, const float* g, float* m, float* v, int64_t n, cudaStream_t s, const std::string& ctx);
// Reads `in_bytes` and writes `out_bytes` once (data movement of an op without a kernel of its own).
void memory_bound(const void* in, int64_t in_bytes, void* out, int64_t out_bytes, cudaStream_t s, const std::string& ctx);
// The empty kernel of the launch-overhead micro-benchmark.
void empty_kernel(cudaStream_t s, const std::string& ctx);

}  // namespace dlsim::cuda
