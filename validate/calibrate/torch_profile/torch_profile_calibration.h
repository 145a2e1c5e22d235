#pragma once
// `dlsim calibrate --torch-profile TRACE.json... --experiment EXP.yaml... --hw FILE --out FILE`: fits PyTorch's
// eager host (host_cpu.pytorch_eager) and, where the traces hold GPU kernels, the kernel classes' corrections to
// torch.profiler traces of training steps (validate/torch/record_profile.py records them), and writes a hardware
// file that starts from the --hw file (`base:`) with the fitted sections. The pieces: profiler_trace.h (the
// reader), profile_steps.h (steps and top-level ops), profile_match.h (to dlsim's graph), host_profile_fit.h and
// kernel_profile_fit.h (the fits). docs/host.md says how to use it; docs/cli.md lists the options.
#include <iosfwd>
#include <string>
#include <vector>

namespace dlsim {

struct TorchProfileOptions {
  std::vector<std::string> traces;       // torch.profiler Chrome traces
  std::vector<std::string> experiments;  // one for all traces, or one per trace (in order): the model and batch
  std::string hw;                        // the hardware file to start from
  std::string out;                       // the hardware file to write
};

// Fits, writes `out` (read back as dlsim reads a hardware file first; nothing is left on an error) and prints
// the report to `report`. Returns 0; bad input throws ConfigError.
int run_torch_profile_calibration(const TorchProfileOptions& o, std::ostream& report);

}  // namespace dlsim
