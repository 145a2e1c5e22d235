#pragma once
// Fits the hardware file's `host_cpu.pytorch_eager:` section (hw/eager_host_model.h) to profiled training steps
// matched to dlsim's graphs (validate/calibrate/torch_profile/profile_match.h). The keys are those
// validate/torch/fit_host_model.py fits from the lent GPUs' per-op profiles, here measured op by op:
//   forward_us.<class>       each matched top-level forward op's host time, by the class of its graph op (batch
//                            norm's num_batches_tracked.add_ is a forward elementwise op, as dlsim charges it);
//   backward_us.<class>      an op's autograd nodes together, less the gradient sums run inside them and less
//                            extra_kernel_us for each further backward op the graph has for it (dlsim charges
//                            backward_us for the first and extra_kernel_us for the others);
//   grad_accumulate_us       each gradient sum (aten::add_ run by the engine inside a node); extra_kernel_us is
//                            given the same value (one more dispatched op with its launch, as fit_host_model.py
//                            assumes: no trace op shows a node's second kernel apart from its first);
//   param_grad_us            each AccumulateGrad node;
//   backward_start_us        from loss.backward()'s seed (aten::ones_like) to autograd's first node;
//   optimizer_step_us        the Optimizer.step span less its top-level ops (Python, grouping the tensors);
//   optimizer_tensor_us      the Optimizer.step's top-level ops (the foreach calls) per parameter.
// Each key is the mean of its samples (the shape of the costs; a mean keeps the total time the ops took, where a
// median would move the large layers' time into the scale); then one scale sets their size, so that dlsim's
// host time for each profiled step equals the step's host time: its ProfilerStep span less the Python thread's
// waits for the GPU (synchronisations), times the profiler's own overhead factor (the step time measured without
// the profiler, which record_profile.py adds to the trace, over the profiled span). Without that measurement the
// factor is 1 and the fitted costs keep the profiler's overhead (said in the report). A key no trace measured
// keeps the --hw file's value when it has the section, else takes a stated stand-in (a backward class its forward
// class's cost, a forward class the elementwise cost); one with neither is a ConfigError.
#include <map>
#include <string>
#include <vector>

#include "hw/eager_host_model.h"
#include "validate/calibrate/torch_profile/profile_match.h"
#include "workloads/graph.h"

namespace dlsim {

// One profiled trace matched to its graph.
struct MatchedProfile {
  const ProfilerTrace* trace = nullptr;
  const Graph* graph = nullptr;
  std::vector<ProfileStep> steps;
  std::vector<StepMatch> matches;  // one per step
};

struct HostKeyFit {
  size_t samples = 0;
  double profiled_us = 0;  // the mean of the samples (before the scale)
  double fitted_us = 0;    // what the file gets
  std::string source;      // "fitted", "kept from the --hw file", "stand-in: <key>"
};

struct HostProfileFit {
  std::map<std::string, HostKeyFit> keys;  // by dotted key (forward_us.conv, ...)
  EagerHostSpec spec;                      // the fitted section
  double scale = 1;
  double profiled_host_us = 0;    // per step, the profiled steps' host time (span less waits), mean
  double target_host_us = 0;      // per step, that time without the profiler's overhead, mean
  double overhead_factor = 1;     // target / profiled (1: no unprofiled measurement)
  bool overhead_measured = false; // every trace carried its unprofiled step time
  double predicted_host_us = 0;   // per step, dlsim's host time for the graphs with the fitted section, mean
  size_t steps = 0;
  // Per trace (in order): its steps' host time without the profiler's overhead, and dlsim's host time for its
  // graph with the fitted section, µs per step. The scale is fitted over all traces together, so each trace's
  // two differ by how far its ops' costs differ from the pooled ones.
  std::vector<std::pair<double, double>> per_trace;
};

// The section's keys in the order the file writes them.
const std::vector<std::string>& eager_host_keys();
// The section's value of `key`, in µs.
double eager_host_key_us(const EagerHostSpec& s, const std::string& key);

// `base`: the --hw file's section, if it has one. Throws ConfigError(first trace's file) when a key has no sample,
// no base value and no stand-in, or when the scale comes out non-positive.
HostProfileFit fit_host_from_profiles(const std::vector<MatchedProfile>& profiles, const EagerHostSpec* base);

// The pytorch_eager mapping as YAML text (indented under host_cpu:), values to 0.01 µs.
std::string eager_host_section_yaml(const EagerHostSpec& s);

}  // namespace dlsim
