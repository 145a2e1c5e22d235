#include "validate/calibrate/kernel_fit/fitted_hw_file.h"

#include <sstream>

#include "hw/fitted/fitted_kernels_yaml.h"

namespace dlsim {
namespace {

bool starts_top_level_key(const std::string& line) {
  return !line.empty() && line[0] != ' ' && line[0] != '\t' && line[0] != '#' && line[0] != '-';
}

}  // namespace

std::string fitted_hardware_text(const std::string& base_text, const FittedKernels& fitted, const std::string& comment) {
  std::istringstream in(base_text);
  std::ostringstream out;
  std::string line;
  bool skipping = false;
  while (std::getline(in, line)) {
    if (starts_top_level_key(line)) skipping = line.rfind("kernel_model:", 0) == 0;
    if (!skipping) out << line << '\n';
  }
  std::string text = out.str();
  while (text.size() >= 2 && text[text.size() - 1] == '\n' && text[text.size() - 2] == '\n') text.pop_back();
  text += '\n';
  std::istringstream c(comment);
  while (std::getline(c, line)) text += line.empty() ? "#\n" : "# " + line + "\n";
  return text + fitted_kernels_to_yaml(fitted);
}

}  // namespace dlsim
