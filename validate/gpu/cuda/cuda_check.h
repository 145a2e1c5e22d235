#pragma once
// Every CUDA, cuDNN and cuBLAS return code is checked; a failure throws CudaError naming the call, the op (or
// other context) and the library's own message, so that a first run on a new machine says what went wrong.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <stdexcept>
#include <string>

namespace dlsim::cuda {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline void check(cudaError_t e, const char* call, const std::string& context) {
  if (e != cudaSuccess)
    throw CudaError(std::string(call) + " failed" + (context.empty() ? "" : " (" + context + ")") + ": " +
                    cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}
inline void check(cudnnStatus_t s, const char* call, const std::string& context) {
  if (s != CUDNN_STATUS_SUCCESS)
    throw CudaError(std::string(call) + " failed" + (context.empty() ? "" : " (" + context + ")") + ": " +
                    cudnnGetErrorString(s));
}
inline void check(cublasStatus_t s, const char* call, const std::string& context) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw CudaError(std::string(call) + " failed" + (context.empty() ? "" : " (" + context + ")") + ": " +
                    cublasGetStatusName(s) + ": " + cublasGetStatusString(s));
}

}  // namespace dlsim::cuda

// CK(call, context): the call's text goes into the message, e.g. "cudnnConvolutionForward(...) failed (op 3 conv1)".
#define DLSIM_CK(call, context) ::dlsim::cuda::check((call), #call, (context))
