#pragma once
// dlsim-cuda selftest, convolutions: cuDNN's forward, backward-data and backward-filter convolutions as a run
// issues them (the op translation of a graph the real builders make, an OpRunner, legacy and graph API alike)
// against float64 references on the CPU: fp32 NCHW with TF32 off and on, fp16 and bf16 channels_last.
//
// Inputs are multiples of 1/16 in [-1/2, 1/2], exact in fp16, bf16 and TF32, so that every product and every
// partial sum is exact in fp32: the only errors left are the output's rounding to its type (2^-11 relative in
// fp16, 2^-8 in bf16) and the rounding of Winograd and FFT transforms in fp32. Each case's tolerance says so;
// a wrong layout, role or stride gives errors of order 1.
#include <functional>
#include <string>
#include <vector>

namespace dlsim::cuda {

// name, the device's result (as floats), the reference, the case's tolerance on ||got - ref|| / ||ref||.
using ConvCaseReport =
    std::function<void(const std::string& name, const std::vector<float>& got, const std::vector<double>& ref, double tol)>;
void run_conv_selftest(const ConvCaseReport& report);

}  // namespace dlsim::cuda
