#include "validate/calibrate/published_points.h"

#include <algorithm>
#include <set>

#include "common/config_error.h"
#include "common/strings.h"
#include "common/yaml_reader.h"
#include "hw/gpu_spec_file.h"
#include "workloads/zoo.h"

namespace dlsim {
namespace {

template <class E, size_t N>
E read_choice(const YamlMap& m, const std::string& key, const std::array<E, N>& values) {
  const std::string v = m.get_string(key);
  if (auto e = choice_named(v, values)) return *e;
  m.fail(key, "unknown " + key + " '" + v + "'; valid: " + choice_names(values));
}

bool is_zoo_model(const std::string& name) {
  for (const ModelInfo& m : model_zoo())
    if (m.name == name) return true;
  return false;
}

PublishedPoint read_point(const YamlMap& m) {
  m.check_keys({"id", "path", "line", "setup", "framework", "gpu", "hw", "model", "batch", "seq_len", "precision",
                "tf32", "memory_format", "kernels", "optimizer", "throughput", "use", "reason"});
  PublishedPoint p;
  p.file_line = m.line();
  p.id = m.get_string("id");
  p.path = m.get_string("path");
  p.line = m.get_int("line");
  if (p.line < 1) m.fail("line", "must be a line number (>= 1)");
  p.setup = m.get_text("setup", "");
  p.framework = m.get_string("framework");
  const std::vector<std::string> frameworks = {"pytorch", "tensorflow", "mxnet", "paddle", "dlsim-harness"};
  if (std::find(frameworks.begin(), frameworks.end(), p.framework) == frameworks.end())
    m.fail("framework", "unknown framework '" + p.framework + "'; valid: " + join(frameworks));
  p.gpu = m.get_string("gpu");
  p.use = read_choice(m, "use", std::array{PointUse::Fit, PointUse::Test, PointUse::Excluded});
  p.reason = m.get_text("reason", "");
  if (p.use == PointUse::Excluded && p.reason.empty()) m.fail("reason", "an excluded point says why");
  // An excluded point may name what dlsim lacks (a model, a GPU); the others must run.
  p.hw = m.get_string("hw");
  const auto hw = list_hw_names();
  if (p.use != PointUse::Excluded && std::find(hw.begin(), hw.end(), p.hw) == hw.end())
    m.fail("hw", "unknown hardware file '" + p.hw + "'; valid: " + join(hw));
  p.model = m.get_string("model");
  if (p.use != PointUse::Excluded && !is_zoo_model(p.model))
    m.fail("model", "unknown model '" + p.model + "' (dlsim model --list)");
  p.batch = m.get_int("batch");
  if (p.batch <= 0) m.fail("batch", "must be positive");
  p.seq_len = m.get_int("seq_len", 0);
  if (p.seq_len < 0) m.fail("seq_len", "must be positive (or 0 for the model's default)");
  p.training.precision = read_choice(m, "precision", kPrecisions);
  p.training.tf32 = read_choice(m, "tf32", kTf32Modes);
  p.training.memory_format = read_choice(m, "memory_format", kMemoryFormats);
  p.training.kernels = read_choice(m, "kernels", kKernelChoices);
  p.training.optimizer = read_choice(m, "optimizer", kOptimizers);
  if (p.use != PointUse::Excluded) {  // a sequence length given to an image model, nhwc to BERT: ignored otherwise
    ModelOptions settings;
    settings.seq_len = p.seq_len;
    settings.training = p.training;
    try {
      check_model_settings(p.model, settings);
    } catch (const ConfigError& e) {
      m.fail(e.key(), e.message());
    }
  }
  p.throughput = m.get_double("throughput");
  if (!(p.throughput > 0)) m.fail("throughput", "must be positive (samples per second)");
  return p;
}

}  // namespace

const char* to_string(PointUse u) {
  switch (u) {
    case PointUse::Fit: return "fit";
    case PointUse::Test: return "test";
    case PointUse::Excluded: return "excluded";
  }
  return "?";
}

PublishedData load_published_points(const std::string& path) {
  YamlMap top(load_yaml_file(path), path);
  top.check_keys({"source", "points"});
  PublishedData d;
  d.file = path;
  const YamlMap src = top.get_map("source");
  src.check_keys({"repo", "commit"});
  d.repo = src.get_string("repo");
  d.commit = src.get_string("commit");
  if (d.commit.size() != 40 || d.commit.find_first_not_of("0123456789abcdef") != std::string::npos)
    src.fail("commit", "must be a full 40-digit commit hash");
  const YAML::Node list = top.get("points");
  if (!list.IsSequence()) top.fail("points", "expected a list of points");
  std::set<std::string> ids;
  for (size_t i = 0; i < list.size(); ++i) {
    const YamlMap m(list[i], path, "points[" + std::to_string(i) + "]");
    PublishedPoint p = read_point(m);
    if (!ids.insert(p.id).second) m.fail("id", "duplicate id '" + p.id + "'");
    d.points.push_back(std::move(p));
  }
  return d;
}

}  // namespace dlsim
