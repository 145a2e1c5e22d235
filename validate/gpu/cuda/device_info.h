#pragma once
// Is there a GPU, and what is it. Kept apart so that every command checks first and fails the same way.
#include <string>

namespace dlsim::cuda {

// Exit code of dlsim-cuda (and of `dlsim validate`) when no CUDA GPU can be used.
constexpr int kExitNoGpu = 3;

// Number of usable GPUs; 0 with `why` set when cudaGetDeviceCount fails (no driver, no device) or finds none.
int count_gpus(std::string& why);
// "NVIDIA H100 80GB HBM3, sm_90, 132 SMs, 79.1 GiB, driver 13.0, runtime 13.0"
std::string describe_device(int device);
// The device's name as the Trace records it.
std::string device_name(int device);

}  // namespace dlsim::cuda
