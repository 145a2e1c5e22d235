#pragma once
// `dlsim calibrate DIR... --hw HW.yaml --out FILE`: fits the hardware model (kernel times per op signature,
// PCIe, launch, cudaMalloc) to `dlsim validate` folders and writes a hardware file (validate/calibrate.h).
// Shape: cli/run_command.h.
#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dlsim {

struct CalibrateCommandOptions {
  std::vector<std::string> dirs;  // dlsim validate output folders
  std::string hw;                 // the hardware file to start from
  std::string out;                // the calibrated hardware file to write
};

CLI::App* add_calibrate_command(CLI::App& app, CalibrateCommandOptions& o);
int run_calibrate_command(const CalibrateCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
