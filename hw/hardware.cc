#include "hw/hardware.h"

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
}  // namespace

Hardware load_hardware(const std::string& name_or_path, const YAML::Node& overrides) {
  const std::string path = resolve_hw_path(name_or_path);
  const YAML::Node file = load_yaml_file(path);
  return hardware_from_yaml(overrides.IsMap() ? merged(file, overrides) : file, path);
}

Hardware hardware_from_yaml(const YAML::Node& node, const std::string& path) {
  Hardware h;
  h.spec = gpu_spec_from_yaml(node, path);
  h.kernels = make_cost_model(h.spec);
  h.link = std::make_unique<PcieLink>(h.spec);
  return h;
}

}  // namespace dlsim
