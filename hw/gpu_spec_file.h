#pragma once
// A hardware file (configs/hw/*.yaml) read into a GpuSpec, its kernel cost model's name and parameters checked
// against the kernel model registry (hw/cost_model.h): above the cost models, which are built from a GpuSpec.
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "hw/gpu_spec.h"

namespace dlsim {

// Reads and checks one hardware file; every missing or malformed field is a ConfigError with file, line, key. A
// file that starts from another (`base:`) is read by load_hardware (hw/hardware.h), which lays its base under it.
GpuSpec load_gpu_spec(const std::string& path);
// The same from a mapping already read (a file with an experiment's overrides merged in); `path` names it.
// `measured`: the measured tables (kernel_times, conv_workspace and their batch-free forms) taken from this
// spec instead of the mapping, which then holds neither key: a file loaded again with other overrides does not
// read its thousands of measured entries again (hw/hardware.cc).
GpuSpec gpu_spec_from_yaml(const YAML::Node& node, const std::string& path, const GpuSpec* measured = nullptr);
// Only the measured tables of a hardware mapping, checked as gpu_spec_from_yaml checks them.
GpuSpec measured_tables_from_yaml(const YAML::Node& node, const std::string& path);
// Whether `hw` names a file rather than a shipped hardware name: it holds a '/' or ends in .yaml.
bool is_hw_path(const std::string& hw);
// How is_hw_path's rule reads in the errors that list the valid hardware.
inline constexpr const char* kHwPathText = "a path to a hardware file (holding a '/' or ending in .yaml)";
// Resolves a name ("h100-sxm") to configs/hw/<name>.yaml under the source tree; a path (is_hw_path) as it is.
std::string resolve_hw_path(const std::string& name_or_path);
// The hardware files shipped in configs/hw (stems, sorted).
std::vector<std::string> list_hw_names();

}  // namespace dlsim
