#pragma once
// `dlsim calibrate DIR... --hw HW.yaml --out FILE`: fits the hardware model (kernel times per op signature,
// PCIe, launch, cudaMalloc) to `dlsim validate` folders and writes a hardware file (validate/calibrate/calibrate.h).
// `dlsim calibrate --published DATA.yaml... [--write-hw] [--report MD] [--json FILE]`: fits the per-class
// efficiencies of each GPU to published throughput instead (validate/calibrate/published_calibration.h).
// `dlsim calibrate --torch-profile TRACE.json... --experiment EXP.yaml... --hw HW.yaml --out FILE`: fits PyTorch's
// eager host and the kernel classes' corrections to torch.profiler traces
// (validate/calibrate/torch_profile/torch_profile_calibration.h).
// Shape: cli/run_command.h.
#include <iosfwd>
#include <string>
#include <vector>

#include "validate/calibrate/published_calibration.h"

namespace CLI {
class App;
}

namespace dlsim {

struct CalibrateCommandOptions {
  std::vector<std::string> dirs;  // dlsim validate output folders
  std::string hw;                 // the hardware file to start from
  std::string out;                // the calibrated hardware file to write
  std::vector<std::string> torch_profiles;  // --torch-profile: torch.profiler traces
  std::vector<std::string> experiments;     // --experiment: the traces' model and batch
  PublishedCalibrationOptions published;  // with --published: the fit to published measurements
  std::string transfer_to, transfer_from;  // comma-separated lists (--transfer-to, --transfer-from)
  bool occupancy_scaling = false;
  bool tie_gemm = false;
  bool class_model_only = false;  // write no op_class_scale: unmeasured ops all take the per-class model
  bool fit_model_only = false;
};

CLI::App* add_calibrate_command(CLI::App& app, CalibrateCommandOptions& o);
int run_calibrate_command(const CalibrateCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
