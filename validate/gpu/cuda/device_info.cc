#include "validate/gpu/cuda/device_info.h"

#include <cuda_runtime.h>

#include <sstream>

#include "validate/gpu/cuda/cuda_check.h"

namespace dlsim::cuda {

int count_gpus(std::string& why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    why = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
    return 0;
  }
  if (n == 0) why = "cudaGetDeviceCount found 0 devices";
  return n;
}

std::string device_name(int device) {
  cudaDeviceProp p{};
  DLSIM_CK(cudaGetDeviceProperties(&p, device), "device " + std::to_string(device));
  return p.name;
}

std::string describe_device(int device) {
  cudaDeviceProp p{};
  DLSIM_CK(cudaGetDeviceProperties(&p, device), "device " + std::to_string(device));
  int driver = 0, runtime = 0;
  DLSIM_CK(cudaDriverGetVersion(&driver), "");
  DLSIM_CK(cudaRuntimeGetVersion(&runtime), "");
  std::ostringstream o;
  o << p.name << ", sm_" << p.major << p.minor << ", " << p.multiProcessorCount << " SMs, "
    << static_cast<double>(p.totalGlobalMem) / (1 << 30) << " GiB, " << p.asyncEngineCount << " copy engines, driver "
    << driver / 1000 << "." << driver % 1000 / 10 << ", runtime " << runtime / 1000 << "." << runtime % 1000 / 10
    << ", cuDNN " << cudnnGetVersion() << ", cuBLAS (dynamic)";
  return o.str();
}

}  // namespace dlsim::cuda
