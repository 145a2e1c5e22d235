#include "workloads/shape.h"

namespace dlsim {

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::optional<int64_t> checked_product(std::initializer_list<int64_t> factors) {
  int64_t n = 1;
  for (int64_t d : factors)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  return n;
}

std::optional<int64_t> checked_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  return n;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string r = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) r += ',';
    r += std::to_string(shape[i]);  // appended apart: `"," + to_string` trips GCC 12's false -Wrestrict
  }
  r += ']';
  return r;
}

}  // namespace dlsim
