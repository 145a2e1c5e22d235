#include "validate/calibrate/torch_profile/matched_profiles.h"

#include "common/config_error.h"
#include "common/strings.h"
#include "experiment/experiment.h"
#include "experiment/experiment_graph.h"

namespace dlsim {

void profile_check_matched(const MatchedProfile& p) {
  size_t unmatched = 0, host_ops = 0, forward = 0;
  std::string first;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    unmatched += p.matches[i].unmatched.size();
    forward += p.matches[i].forward.size();
    host_ops += p.steps[i].forward.size() + p.steps[i].backward.size() + p.steps[i].other.size();
    for (const UnmatchedProfileOp& u : p.matches[i].unmatched)
      if (first.size() < 600) first += "\n  " + u.what;
  }
  if (forward == 0 || static_cast<double>(unmatched) > kMaxUnmatchedShare * static_cast<double>(host_ops))
    throw ConfigError(p.trace->file, 0, "traceEvents",
                      std::to_string(unmatched) + " of its " + std::to_string(host_ops) + " top-level host ops match "
                      "no op of " + p.graph->name + " at batch " + std::to_string(p.graph->batch) +
                      " (more than " + fixed(100 * kMaxUnmatchedShare, 0) + " %: a trace of another model or "
                      "batch?); the first:" + first);
}

MatchedProfiles load_matched_profiles(const std::vector<std::string>& traces,
                                      const std::vector<std::string>& experiments) {
  if (experiments.size() != 1 && experiments.size() != traces.size())
    throw ConfigError("<command line>", 0, "--experiment",
                      "give one experiment for all traces or one per trace, in order (" +
                          std::to_string(traces.size()) + " traces, " + std::to_string(experiments.size()) +
                          " experiments)");
  MatchedProfiles m;
  std::map<std::string, std::string> model_of;
  for (const std::string& path : experiments) {
    if (m.graphs.count(path)) continue;
    const Experiment e = load_experiment(path);
    m.graphs[path] = std::make_unique<Graph>(build_experiment_graph(e));
    model_of[path] = e.model_label() + " at batch " + std::to_string(e.batch) + " (" + path + ")";
  }
  for (size_t i = 0; i < traces.size(); ++i) {
    const std::string& exp = experiments.size() == 1 ? experiments[0] : experiments[i];
    m.traces.push_back(std::make_unique<ProfilerTrace>(load_profiler_trace(traces[i])));
    MatchedProfile p;
    p.trace = m.traces.back().get();
    p.graph = m.graphs.at(exp).get();
    p.steps = profile_steps(*p.trace);
    m.profiles.push_back(std::move(p));
    m.models.push_back(model_of.at(exp));
  }
  // The matches point into the steps: made once the steps no longer move.
  for (MatchedProfile& p : m.profiles) {
    for (const ProfileStep& s : p.steps) p.matches.push_back(match_profile_step(*p.trace, s, *p.graph));
    profile_check_matched(p);
  }
  return m;
}

}  // namespace dlsim
