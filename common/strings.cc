#include "common/strings.h"

#include <iomanip>
#include <sstream>

namespace dlsim {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::string fixed(double v, int digits) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}

std::string significant(double v, int digits) {
  std::ostringstream o;
  o << std::setprecision(digits) << v;
  return o.str();
}

std::string mib(uint64_t bytes) { return fixed(static_cast<double>(bytes) / (1024.0 * 1024.0), 1); }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string field;
  for (char c : s) {
    if (c == sep) {
      if (!field.empty()) out.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  if (!field.empty()) out.push_back(field);
  return out;
}

}  // namespace dlsim
