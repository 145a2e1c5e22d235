#include "workloads/shape.h"

namespace dlsim {

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string r = "[";
  for (size_t i = 0; i < shape.size(); ++i) r += (i ? "," : "") + std::to_string(shape[i]);
  return r + "]";
}

}  // namespace dlsim
