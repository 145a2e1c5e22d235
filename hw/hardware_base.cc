#include "hw/hardware_base.h"

#include <filesystem>
#include <map>
#include <utility>

#include "common/config_error.h"
#include "common/yaml_reader.h"
#include "hw/gpu_spec_file.h"

namespace dlsim {

namespace {

std::string hardware_base_identity(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

YAML::Node load_hardware_document_in(const std::string& path, std::vector<std::string>& chain) {
  YAML::Node doc = load_yaml_file(path);
  const std::string base = hardware_base_of(doc, path);
  if (base.empty()) return doc;
  check_hardware_base(doc, path, base, chain);
  chain.push_back(path);
  const YAML::Node under = load_hardware_document_in(base, chain);
  gpu_spec_from_yaml(under, base);  // the base alone must be a hardware file: its errors name it
  return overlay_hardware(under, doc);
}

}  // namespace

std::string hardware_base_of(const YAML::Node& doc, const std::string& path) {
  if (!doc.IsMap()) return "";
  const YamlMap m(doc, path);
  if (!m.has("base")) return "";
  const std::string name = m.get_string("base");
  if (!is_hw_path(name)) {
    try {
      return resolve_hw_path(name);
    } catch (const ConfigError& e) {
      throw ConfigError(path, m.line_of("base"), "base", e.message());
    }
  }
  std::filesystem::path p(name);
  if (p.is_relative()) p = std::filesystem::path(path).parent_path() / p;
  if (!std::filesystem::is_regular_file(p))
    m.fail("base", "hardware file '" + p.string() + "' not found (a path is relative to this file's folder)");
  return p.string();
}

void check_hardware_base(const YAML::Node& doc, const std::string& path, const std::string& base,
                         const std::vector<std::string>& chain) {
  const YamlMap m(doc, path);
  const std::string id = hardware_base_identity(base);
  if (id == hardware_base_identity(path))
    m.fail("base", "names this file itself");
  for (const std::string& f : chain)
    if (hardware_base_identity(f) == id) m.fail("base", "'" + base + "' leads back to '" + f + "' (a cycle of bases)");
  if (static_cast<int>(chain.size()) >= kMaxHardwareBases)
    m.fail("base", "a chain of more than " + std::to_string(kMaxHardwareBases) + " bases");
}

YAML::Node overlay_hardware(const YAML::Node& base, const YAML::Node& over) {
  // Entries are inserted with their own key and value nodes (force_insert shares them, as an alias would), so
  // that line_of() still finds each key's line in its file.
  std::map<std::string, std::pair<YAML::Node, YAML::Node>> mine;
  for (const auto& kv : over) mine.emplace(kv.first.Scalar(), std::make_pair(kv.first, kv.second));
  mine.erase("base");
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& kv : base) {
    const auto it = mine.find(kv.first.Scalar());
    if (it == mine.end()) {
      out.force_insert(kv.first, kv.second);
      continue;
    }
    const auto& [key, value] = it->second;
    if (value.IsMap() && kv.second.IsMap()) out.force_insert(key, overlay_hardware(kv.second, value));
    else out.force_insert(key, value);
    mine.erase(it);
  }
  for (const auto& kv : over)  // the keys only the variant has, in its order
    if (mine.contains(kv.first.Scalar())) out.force_insert(kv.first, kv.second);
  return out;
}

YAML::Node load_hardware_document(const std::string& path) {
  std::vector<std::string> chain;
  return load_hardware_document_in(path, chain);
}

std::string hardware_base_reference(const std::string& hw, const std::string& out) {
  namespace fs = std::filesystem;
  const fs::path hw_abs = fs::weakly_canonical(fs::absolute(hw));
  const std::string stem = fs::path(hw).stem().string();
  try {
    const fs::path shipped = fs::weakly_canonical(fs::absolute(resolve_hw_path(stem)));
    if (shipped == hw_abs && fs::path(hw).extension() == ".yaml") return stem;
  } catch (const ConfigError&) {
    // not a shipped name
  }
  const fs::path dir = fs::weakly_canonical(fs::absolute(out)).parent_path();
  std::string rel = fs::relative(hw_abs, dir).generic_string();
  if (rel.find('/') == std::string::npos) rel = "./" + rel;  // a path, not a shipped name (gpu_spec_file.h)
  return rel;
}

}  // namespace dlsim
