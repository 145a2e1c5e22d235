#pragma once
// Library entry points of the harness for the CLI (`dlsim validate`, `dlsim calibrate`, `dlsim compare`).
// Directory layout written by run_validate and read by run_calibrate:
//   DIR/plan.json        the Graph + Program + pool (validate/gpu/program_file.h)
//   DIR/trace.sim.json   the simulator's trace of the same Program
//   DIR/trace.cuda.json  the real GPU's trace;  DIR/report.cuda.json  pool and arena figures, conv algorithms
//   DIR/micro.json       micro-benchmarks (when asked for)
#include <ostream>
#include <string>
#include <vector>

#include "program/trace.h"
#include "program/trace_file.h"
#include "validate/gpu/program_file.h"

namespace dlsim {

struct ValidateOptions {
  std::string experiment_path, out_dir;
  int warmup = 2, iterations = 5;
  bool microbench = false;
  std::string cuda_binary;  // "" : dlsim-cuda beside the running executable (or $DLSIM_CUDA)
};

// Writes the plan and the simulated trace, runs dlsim-cuda on the plan (and the micro-benchmarks), prints the
// comparison. Returns 0, or dlsim-cuda's exit code: 3 when there is no GPU (or no dlsim-cuda), with a message.
int run_validate(const ValidateOptions& opts, const ProgramFile& plan, const Trace& sim_trace, std::ostream& out,
                 std::ostream& err);
// Fits the hardware model from validate directories and writes the hardware YAML to out_path. Measured first: an
// op a table entry serves takes its measured time; an op of a kind the runs measured, the single-efficiency
// roofline corrected by that kind's measured factor (op_class_scale); only a kind no run measured falls back to
// the input's per-class model ([F] values fitted to published data) or, without one, the plain roofline.
// class_model_only = true writes no per-kind factor, so that every unmeasured op takes the per-class model:
// results/validation/h100-sxm/ compares the two on models left out of the calibration.
int run_calibrate(const std::vector<std::string>& dirs, const std::string& hw_path, const std::string& out_path,
                  std::ostream& out, bool class_model_only = false);
// Prints the error tables of a simulated trace against a measured one; plan_path gives the Graph (op names).
// Both traces must be of that plan and the measured one must have measured something
// (validate/calibrate/trace_checks.h): else a ConfigError naming the file and field. Warnings go to `err`.
int run_compare(const std::string& sim_trace, const std::string& real_trace, const std::string& plan_path,
                std::ostream& out, std::ostream& err, bool json = false);


}  // namespace dlsim
