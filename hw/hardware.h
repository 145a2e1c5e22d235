#pragma once
// Everything the simulator needs to know about one machine, loaded from a configs/hw name or a YAML path.
#include <memory>
#include <string>

#include <yaml-cpp/yaml.h>

#include "hw/cost_model.h"
#include "hw/gpu_spec.h"

namespace dlsim {

struct Hardware {
  GpuSpec spec;
  std::unique_ptr<KernelCostModel> kernels;
  std::unique_ptr<TransferModel> link;
};

// The spec's kernel_model (kernel_model_registry) with the spec's kernel_model_params, declared defaults for the
// parameters it does not set.
std::unique_ptr<KernelCostModel> make_cost_model(const GpuSpec& spec);

// resolve_hw_path + load_gpu_spec + make_cost_model + PcieLink. Errors are ConfigErrors naming file/line/key.
// `overrides` (a mapping, or null for none) is merged into the file first, key by key at any depth, so that an
// experiment can vary a field (`hw_override: {pcie: {h2d_pinned_gb_per_s: 25}}`); every value is then
// checked as the file's own would be.
Hardware load_hardware(const std::string& name_or_path, const YAML::Node& overrides = YAML::Node());
// The same from a hardware mapping already parsed (`path` names it in errors and gives the GPU's name).
Hardware hardware_from_yaml(const YAML::Node& node, const std::string& path);
// A Hardware from an already-checked spec (its cost and transfer models built from it).
Hardware hardware_from_spec(GpuSpec spec);

}  // namespace dlsim
