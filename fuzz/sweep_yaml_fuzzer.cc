// Fuzz target: a sweep YAML file (experiment/sweep/sweep.h): the base experiment and every point the `vary` axes expand to.
// A sweep of more than kMaxPoints points is skipped before it is expanded: each point is a whole experiment
// check, so one input could otherwise spend seconds (the size of a sweep is bounded, if at all, by the loader's
// own limits, not by this target).
#include <algorithm>

#include "experiment/sweep/sweep.h"
#include "common/yaml_reader.h"
#include "fuzz/fuzz_input.h"

namespace {
constexpr size_t kMaxPoints = 8;

size_t point_count(const YAML::Node& sweep) {
  if (!sweep.IsMap() || !sweep["vary"] || !sweep["vary"].IsMap()) return 1;
  size_t n = 1;
  for (const auto& axis : sweep["vary"]) {
    if (axis.second.IsSequence()) n *= std::max<size_t>(1, axis.second.size());
    if (n > kMaxPoints) break;
  }
  return n;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dlsim::fuzz::run_loader([&] {
    const std::string file = "fuzz-sweep.yaml";
    const YAML::Node sweep = dlsim::parse_yaml_text(dlsim::fuzz::as_text(data, size), file);
    if (point_count(sweep) > kMaxPoints) return;
    dlsim::sweep_from_yaml(sweep, file);
  });
}
