#include "experiment/simfuzz/simfuzz_keys.h"

#include <utility>
#include <vector>

#include "experiment/sweep/resume.h"
#include "experiment/sweep/runs_csv_row.h"

namespace dlsim {

namespace {

// One step into a YAML value: a mapping's key, or a list's index.
struct Step {
  bool is_index = false;
  std::string key;
  size_t index = 0;
};
using Path = std::vector<Step>;

void collect(const YAML::Node& n, Path& at, std::vector<Path>& leaves, std::vector<Path>& lists) {
  if (n.IsMap()) {
    for (const auto& kv : n) {
      at.push_back({false, kv.first.Scalar(), 0});
      collect(kv.second, at, leaves, lists);
      at.pop_back();
    }
  } else if (n.IsSequence()) {
    lists.push_back(at);
    for (size_t i = 0; i < n.size(); ++i) {
      at.push_back({true, "", i});
      collect(n[i], at, leaves, lists);
      at.pop_back();
    }
  } else {
    leaves.push_back(at);
  }
}

// The node at `p` in `root` (a handle into root's tree: assigning to it changes root).
YAML::Node node_at(const YAML::Node& root, const Path& p) {
  YAML::Node n;
  n.reset(root);
  for (const Step& s : p) {
    YAML::Node next = s.is_index ? n[s.index] : n[s.key];
    n.reset(next);
  }
  return n;
}

// The same value with every mapping's keys in the reverse order.
YAML::Node reordered(const YAML::Node& n) {
  if (n.IsMap()) {
    std::vector<std::pair<std::string, YAML::Node>> entries;
    for (const auto& kv : n) entries.emplace_back(kv.first.Scalar(), kv.second);
    YAML::Node out(YAML::NodeType::Map);
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) out[it->first] = reordered(it->second);
    return out;
  }
  if (n.IsSequence()) {
    YAML::Node out(YAML::NodeType::Sequence);
    for (size_t i = 0; i < n.size(); ++i) out.push_back(reordered(n[i]));
    return out;
  }
  return YAML::Clone(n);
}

std::string with_override(const Experiment& e, const YAML::Node& o) {
  Experiment x = e;
  x.hw_override.reset(o);  // rebinds x's handle only: e's tree is untouched
  return runs_csv_key(x);
}

}  // namespace

std::optional<std::string> check_sweep_key(const Experiment& e) {
  const std::string key = runs_csv_key(e);
  ExperimentResult r;
  r.experiment = e;
  if (row_key(runs_csv_row(r, "ok", ""), runs_csv_key_columns()) != key)
    return "the key does not survive a runs.csv row: " + key;
  if (!e.hw_override.IsMap()) return std::nullopt;
  if (with_override(e, reordered(e.hw_override)) != key)
    return "the key depends on the order of hw_override's mappings: " + key;
  std::vector<Path> leaves, lists;
  Path at;
  collect(e.hw_override, at, leaves, lists);
  for (const Path& p : leaves) {
    YAML::Node o = YAML::Clone(e.hw_override);
    YAML::Node leaf = node_at(o, p);
    leaf = (leaf.IsScalar() ? leaf.Scalar() : std::string()) + "1";
    if (with_override(e, o) == key) return "changing one hw_override value leaves the key as it was: " + key;
  }
  for (const Path& p : lists) {
    YAML::Node grown = YAML::Clone(e.hw_override);
    node_at(grown, p).push_back(YAML::Node("1"));
    if (with_override(e, grown) == key) return "adding a list element to hw_override leaves the key as it was: " + key;
    const YAML::Node list = node_at(e.hw_override, p);
    if (list.size() == 0) continue;
    YAML::Node shorter(YAML::NodeType::Sequence);
    for (size_t i = 0; i + 1 < list.size(); ++i) shorter.push_back(YAML::Clone(list[i]));
    YAML::Node cut = YAML::Clone(e.hw_override);
    YAML::Node target = node_at(cut, p);
    target = shorter;
    if (with_override(e, cut) == key) return "dropping a list element of hw_override leaves the key as it was: " + key;
  }
  return std::nullopt;
}

std::optional<std::string> check_swap_flags(const Experiment& e, const nlohmann::json& figures, uint64_t peak_live_bytes) {
  const uint64_t target = figures.at("swap_target_bytes").get<uint64_t>();
  const bool met = figures.at("swap_limit_met").get<bool>();
  bool limit_set = false;
  for (const char* name : {"limit_fraction", "limit_mb"})
    if (e.swap.params.has(name) && e.swap.params.get_double(name) > 0) limit_set = true;
  if (limit_set && target == 0) return std::string("a limit was set, and the target is 0 bytes (read as no target)");
  if (met != (target == 0 || peak_live_bytes <= target))
    return "swap_limit_met is " + std::string(met ? "true" : "false") + " for a peak of " +
           std::to_string(peak_live_bytes) + " bytes against a target of " + std::to_string(target);
  const bool applies = figures.at("swap_bound_applies").get<bool>();
  if (applies && !met) return std::string("swap_bound_applies for a run that missed its target");
  if (figures.contains("swap_gap_to_bound")) {
    if (!applies) return std::string("a gap to the lower bound where the bound does not apply");
    const double gap = figures["swap_gap_to_bound"].get<double>();
    if (gap < -1e-9) return "a negative gap to the lower bound (" + std::to_string(gap) + ") where it applies";
  }
  return std::nullopt;
}

}  // namespace dlsim
