#pragma once
// `dlsim calibrate --published DATA.yaml...`: fits the per-class efficiencies of each GPU to published throughput
// (validate/calibrate/published_points.h, validate/calibrate/published_regression.h), checks the fit by leaving each model out, predicts the
// held-out points, and optionally writes the fitted values into the hardware files ([F] blocks,
// validate/calibrate/calibrated_block.h) and the tables of results/published.md.
//
// Every prediction is made twice: by the fit's own model (the sum of kernel times) and by a full simulation of
// the experiment (`dlsim run`: serial stream, host launch costs, the framework's pool), which is the figure the
// tables report. "Before" is the hardware file without its [F] block (compute_efficiency / memory_efficiency for
// every class); "after" the fit on every point of the GPU; "left out" the fit on the GPU's other models.
#include <iosfwd>
#include <string>
#include <vector>

namespace dlsim {

struct PublishedCalibrationOptions {
  std::vector<std::string> data;          // data files (use: fit points are fitted, use: test points predicted)
  bool write_hw = false;                  // write the [F] blocks into the hardware files of the fitted GPUs
  std::vector<std::string> transfer_to;   // hardware files with no published points that take fitted values...
  std::vector<std::string> transfer_from; // ...from these GPUs, the first that has each value
  std::string report;                     // markdown tables ("" : none)
  std::string json;                       // every prediction as JSON ("" : none)
  bool occupancy_scaling = false;         // the fit's model (validate/calibrate/published_regression.h)
  bool split_memory = false;
  bool tie_gemm_to_conv = false;
  bool simulate = true;                   // false: the fit's own model only (fast; for trying model variants)
};

int run_published_calibration(const PublishedCalibrationOptions& o, std::ostream& out);

}  // namespace dlsim
