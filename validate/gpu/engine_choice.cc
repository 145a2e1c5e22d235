#include "validate/gpu/engine_choice.h"

namespace dlsim {

const char* to_string(EngineSource s) { return s == EngineSource::Heuristics ? "heuristics" : "fallback"; }

const char* to_string(EngineVerdict v) {
  switch (v) {
    case EngineVerdict::Chosen: return "chosen";
    case EngineVerdict::DownConvertsInputs: return "down-converts-inputs";
    case EngineVerdict::TensorCoresNotAllowed: return "tensor-cores-not-allowed";
    case EngineVerdict::Nondeterministic: return "nondeterministic";
    case EngineVerdict::NotSupported: return "not-supported";
    case EngineVerdict::WorkspaceTooLarge: return "workspace-too-large";
  }
  return "?";
}

namespace {

// The notes that take a configuration out before any plan is built (PyTorch's filterEngineConfigs).
std::optional<EngineVerdict> filtered(const EngineChoicePolicy& p, const EngineOffer& o) {
  if (p.deterministic && o.nondeterministic) return EngineVerdict::Nondeterministic;
  if (o.down_convert_inputs) return EngineVerdict::DownConvertsInputs;
  if (!p.allow_tensor_cores && o.tensor_core) return EngineVerdict::TensorCoresNotAllowed;
  return std::nullopt;
}

}  // namespace

EngineChoice choose_engine(const EngineChoicePolicy& policy,
                           const std::function<std::vector<EngineOffer>(EngineSource)>& offers,
                           const std::function<PlanAttempt(EngineSource, size_t)>& try_plan) {
  EngineChoice c;
  for (EngineSource src : {EngineSource::Heuristics, EngineSource::Fallback}) {
    const std::vector<EngineOffer> list = offers(src);
    for (size_t i = 0; i < list.size(); ++i) {
      EngineTrial t{src, list[i].tag, EngineVerdict::Chosen, 0, ""};
      if (auto why = filtered(policy, list[i])) {
        t.verdict = *why;
        c.trials.push_back(std::move(t));
        continue;
      }
      const PlanAttempt a = try_plan(src, i);
      t.workspace = a.workspace;
      t.detail = a.detail;
      if (!a.finalized) t.verdict = EngineVerdict::NotSupported;
      else if (a.workspace > policy.workspace_limit) t.verdict = EngineVerdict::WorkspaceTooLarge;
      c.trials.push_back(std::move(t));
      if (c.trials.back().verdict == EngineVerdict::Chosen) {
        c.chosen = c.trials.size() - 1;
        return c;
      }
    }
  }
  return c;
}

}  // namespace dlsim
