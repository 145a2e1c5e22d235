#include "hw/kernel_times_yaml.h"

#include <yaml-cpp/yaml.h>

namespace dlsim {

std::string kernel_times_yaml(const std::map<std::string, TimeNs>& times) {
  if (times.empty()) return "kernel_times: []\n";
  std::string out = "kernel_times:\n";
  for (const auto& [sig, ns] : times) {
    // yaml-cpp does the quoting: signatures hold '[', ']', ',', ';' and '=', which plain YAML scalars cannot.
    YAML::Emitter e;
    e << YAML::DoubleQuoted << sig;
    out += "  - {signature: ";
    out += e.c_str();
    out += ", ns: " + std::to_string(ns) + "}\n";
  }
  return out;
}

}  // namespace dlsim
