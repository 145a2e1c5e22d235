#pragma once
// A tensor's shape: its element count and how messages print it. The one definition of both, for every part
// (model builders, training synthesis, ONNX import, cost models).
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace dlsim {

// The number of elements: the product of the dimensions, 1 for a scalar's empty shape.
// numel({2, 3, 4}) == 24; numel({}) == 1.
int64_t numel(const std::vector<int64_t>& shape);

// The product of non-negative factors, or nullopt when it would not fit in an int64 (a huge batch or image size
// multiplied through a shape used to wrap silently into a small or negative count).
std::optional<int64_t> checked_product(std::initializer_list<int64_t> factors);
std::optional<int64_t> checked_numel(const std::vector<int64_t>& shape);

// The largest tensor dlsim builds: 2^50 bytes (1 PiB), far beyond any device's memory, so that byte counts,
// their sums over a graph and the arithmetic on them cannot wrap. A model asking for more is an input error.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 50;

// shape_str({2, 3, 4}) == "[2,3,4]"; shape_str({}) == "[]".
std::string shape_str(const std::vector<int64_t>& shape);

}  // namespace dlsim
