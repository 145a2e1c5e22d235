#pragma once
// The small kernels of ours: random inputs, element-wise ops, row-wise ops, optimizer updates. Each launcher
// enqueues one kernel on `stream` and checks the launch. `bf16` selects the element type (bf16 or fp32).
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace dlsim::cuda {

// Uniform random floats in [-1, 1) (never all zeros), or integers in [0, range) for index tensors.
void fill_random(void* p, uint64_t bytes, bool bf16, uint64_t seed, cudaStream_t s, const std::string& ctx);
void fill_random_indices(void* p, int64_t count, int64_t range, uint64_t seed, cudaStream_t s, const std::string& ctx);

// Element-wise: fn 0 add, 1 mul, 2 mul backward, 3 sum-accumulate, 4 relu, 5 relu6, 6 gelu, 7 dropout.
void binary(int fn, const void* a, const void* b, int64_t nb, void* out, void* out2, int64_t n, bool bf16,
            cudaStream_t s, const std::string& ctx);
void unary(int fn, const void* x, void* y, void* mask, int64_t n, bool bf16, cudaStream_t s, const std::string& ctx);
void unary_backward(int fn, const void* saved, const void* dy, void* dx, int64_t n, bool bf16, cudaStream_t s,
                    const std::string& ctx);
void bias_add(const float* b, void* y, int64_t rows, int64_t cols, bool bf16, cudaStream_t s, const std::string& ctx);
void bias_grad(const void* dy, float* db, int64_t rows, int64_t cols, bool bf16, cudaStream_t s, const std::string& ctx);
void layer_norm(const void* x, const float* gamma, const float* beta, void* y, int64_t rows, int64_t cols, bool bf16,
                cudaStream_t s, const std::string& ctx);
void layer_norm_backward(const void* x, const void* dy, const float* gamma, void* dx, float* dgamma, int64_t rows,
                         int64_t cols, bool bf16, cudaStream_t s, const std::string& ctx);
void embedding(const int64_t* ids, const float* table, void* y, int64_t rows, int64_t cols, bool bf16,
               cudaStream_t s, const std::string& ctx);
void embedding_backward(const int64_t* ids, const void* dy, float* dtable, int64_t rows, int64_t cols, bool bf16,
                        cudaStream_t s, const std::string& ctx);
void cross_entropy(const void* logits, const int64_t* target, float* loss, void* dlogits, int64_t rows, int64_t cols,
                   bool bf16, cudaStream_t s, const std::string& ctx);
void sgd_momentum(float* w, const float* g, float* m, int64_t n, cudaStream_t s, const std::string& ctx);
void adam(float* w, const float* g, float* m, float* v, int64_t n, cudaStream_t s, const std::string& ctx);
// Reads `in_bytes` and writes `out_bytes` once (data movement: transpose, pad, unknown ops).
void memory_bound(const void* in, int64_t in_bytes, void* out, int64_t out_bytes, cudaStream_t s, const std::string& ctx);
// The empty kernel of the launch-overhead micro-benchmark.
void empty_kernel(cudaStream_t s, const std::string& ctx);

}  // namespace dlsim::cuda
