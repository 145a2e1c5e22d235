#pragma once
// `dlsim fit-kernels SWEEP.json... --hw BASE.yaml --out NEW.yaml [--report FILE] [--predictions FILE] [--folds K]`:
// fits the kernel model's classes to sweeps of measured kernels on one GPU (validate/calibrate/kernel_fit/) and
// writes BASE with the fitted kernel_model section: a hardware file for a GPU from sweeps on it and the datasheet
// file alone. Each sweep's records are timed as its meta.timing_mode says (an event-timed sweep's hold PyTorch's
// dispatch, a graph-timed sweep's do not; kernel_fit.h fits both). --report writes the cross-validation (k-fold by
// shape and leave-one-model-out, against BASE's own pricing) as Markdown, --predictions each sample's predicted
// times beside its measured one as JSON: with BASE a shipped file, how that file prices sweeps it was not fitted on.
// `--trace TRACE.json... --experiment EXP.yaml... [--gap-us G]` adds the kernels of torch.profiler traces of
// training steps as device-timed samples (validate/calibrate/kernel_fit/trace_samples.h), G µs of idle GPU per
// kernel added to each (what a CUDA-graph replay adds to its kernels' sum); the written classes' fixed costs are
// then the device's (kernel_model.fixed_includes_dispatch false).
// `dlsim fit-kernels --shapes-of MODEL[,MODEL...] [--batch 8,32] --out SHAPES.json`: instead, the zoo models'
// kernel shapes for validate/torch/kernel_sweep.py to measure. Shape: cli/run_command.h.
#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dlsim {

struct FitKernelsCommandOptions {
  std::vector<std::string> sweeps;  // the sweep files (kernels.json format), of one GPU
  std::string hw;       // the hardware file to start from (a name or a path)
  std::string out;      // the hardware file to write (--shapes-of: the shapes file)
  std::string report;   // the cross-validation report (Markdown), optional
  std::string predictions;  // the cross-validation's per-sample predictions (JSON), optional
  std::string description;  // the written file's description ("": BASE's, with the sweep named)
  int folds = 5;
  double tile = 128;
  double min_split_k = 512;
  std::string shapes_of;             // comma-separated zoo models
  std::vector<int64_t> batches = {8, 32};
  std::vector<std::string> traces;       // torch.profiler traces whose kernels are samples too
  std::vector<std::string> experiments;  // their experiments: one for all, or one per trace
  double gap_us = 0;                     // idle GPU per kernel of a trace's units
};

CLI::App* add_fit_kernels_command(CLI::App& app, FitKernelsCommandOptions& o);
int run_fit_kernels_command(const FitKernelsCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
