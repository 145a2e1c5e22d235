#pragma once
// torch.profiler traces read and matched to dlsim's training graphs of the models they profiled: what both
// `dlsim calibrate --torch-profile` and `dlsim fit-kernels --trace` start from. Each trace comes with the
// experiment (model and batch) it profiled: one experiment for every trace, or one per trace in order. A trace
// most of whose top-level ops match nothing is refused (kMaxUnmatchedShare): it is of another model or batch.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "validate/calibrate/torch_profile/host_profile_fit.h"
#include "workloads/graph.h"

namespace dlsim {

// The most of a trace's top-level ops that may match nothing before the trace is taken to be of another model
// (or batch): then nothing is written and the error lists them.
inline constexpr double kMaxUnmatchedShare = 0.10;

struct MatchedProfiles {
  std::map<std::string, std::unique_ptr<Graph>> graphs;  // by experiment file
  std::vector<std::unique_ptr<ProfilerTrace>> traces;
  std::vector<MatchedProfile> profiles;  // one per trace, in order; they point into graphs and traces
  std::vector<std::string> models;       // per trace: "<model> at batch <n> (<experiment file>)"
};

// Throws ConfigError naming the command line (a count of experiments that fits neither form), the trace (not a
// profiler trace, no steps, another model's) or the experiment.
MatchedProfiles load_matched_profiles(const std::vector<std::string>& traces,
                                      const std::vector<std::string>& experiments);

// Refuses a trace most of whose ops match nothing (ConfigError naming the trace and the first unmatched ops).
void profile_check_matched(const MatchedProfile& p);

}  // namespace dlsim
