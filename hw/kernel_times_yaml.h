#pragma once
// Writes measured kernel times in the form load_gpu_spec reads back (the `kernel_times:` section of a
// configs/hw file), so that calibration does not need to know the YAML layout or its quoting rules.
#include <map>
#include <string>

#include "hw/gpu_spec.h"

namespace dlsim {

// "kernel_times:\n  - {signature: \"...\", ns: N}\n..." in signature order (deterministic); an empty map gives
// "kernel_times: []\n". Append it to a hardware file that has no kernel_times section yet.
std::string kernel_times_yaml(const std::map<std::string, TimeNs>& times);

}  // namespace dlsim
