// dlsim-cuda: the real-GPU side of the harness, a program apart from dlsim so that dlsim itself needs no GPU and
// no cuDNN. Commands:
//   dlsim-cuda devices                                  list the GPUs (exit 3 when there is none)
//   dlsim-cuda run PLAN.json --out TRACE.json [--warmup N] [--iterations N]
//   dlsim-cuda microbench --out MICRO.json [--quick]
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "validate/gpu/cuda/device_info.h"
#include "validate/gpu/cuda/cuda_commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return dlsim::cuda::main_with_args(args, std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "dlsim-cuda: " << e.what() << "\n";
    return 1;
  }
}
