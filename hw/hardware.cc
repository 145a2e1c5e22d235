#include "hw/hardware.h"

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "common/yaml_reader.h"
#include "hw/pcie_link.h"

namespace dlsim {

std::unique_ptr<KernelCostModel> make_cost_model(const GpuSpec& spec) {
  const auto& entry = kernel_model_registry().get(spec.kernel_model, spec.file, 0, "kernel_model");
  Params p(entry.params);  // a spec built in code may name none: the declared defaults
  for (const auto& [k, v] : spec.kernel_model_params.values()) p.set(k, v);
  return entry.factory(p, spec);
}

namespace {
// `over` laid onto a copy of `base`: mappings merge key by key, anything else replaces.
YAML::Node merged(const YAML::Node& base, const YAML::Node& over) {
  if (!over.IsMap() || !base.IsMap()) return YAML::Clone(over);
  YAML::Node out = YAML::Clone(base);
  for (const auto& kv : over) {
    const std::string k = kv.first.Scalar();
    out[k] = out[k] ? merged(out[k], kv.second) : YAML::Clone(kv.second);
  }
  return out;
}

// A hardware file parsed once per process and content (the calibrated h100-sxm.yaml is about 1 MB: parsing it
// took most of a small experiment's time, twice per run, and every sweep point and fuzz case loads it again).
// Keyed by path, size and modification time, so that a file edited between loads is read afresh; the document
// is never modified (merged() works on a clone) and the spec is copied out.
struct ParsedHardwareFile {
  YAML::Node document;
  std::optional<GpuSpec> spec;  // read on the first load without overrides (overrides may complete a file)
};

ParsedHardwareFile& parsed_hardware_file(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, uintmax_t, std::filesystem::file_time_type>, ParsedHardwareFile> cache;
  std::error_code ec;
  const auto key = std::make_tuple(path, std::filesystem::file_size(path, ec), std::filesystem::last_write_time(path, ec));
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  ParsedHardwareFile f;
  f.document = load_yaml_file(path);
  if (cache.size() >= 64) cache.clear();  // bound: a long sweep over generated files
  return cache.emplace(key, std::move(f)).first->second;
}

}  // namespace

Hardware load_hardware(const std::string& name_or_path, const YAML::Node& overrides) {
  const std::string path = resolve_hw_path(name_or_path);
  ParsedHardwareFile& file = parsed_hardware_file(path);
  if (overrides.IsMap()) return hardware_from_yaml(merged(file.document, overrides), path);
  if (!file.spec) file.spec = gpu_spec_from_yaml(file.document, path);  // an error leaves it unset: thrown again
  return hardware_from_spec(*file.spec);
}

Hardware hardware_from_yaml(const YAML::Node& node, const std::string& path) {
  return hardware_from_spec(gpu_spec_from_yaml(node, path));
}

Hardware hardware_from_spec(GpuSpec spec) {
  Hardware h;
  h.spec = std::move(spec);
  h.kernels = make_cost_model(h.spec);
  h.link = std::make_unique<PcieLink>(h.spec);
  return h;
}

}  // namespace dlsim
