#pragma once
// A tensor's shape: its element count and how messages print it. The one definition of both, for every part
// (model builders, training synthesis, ONNX import, cost models).
#include <cstdint>
#include <string>
#include <vector>

namespace dlsim {

// The number of elements: the product of the dimensions, 1 for a scalar's empty shape.
// numel({2, 3, 4}) == 24; numel({}) == 1.
int64_t numel(const std::vector<int64_t>& shape);

// shape_str({2, 3, 4}) == "[2,3,4]"; shape_str({}) == "[]".
std::string shape_str(const std::vector<int64_t>& shape);

}  // namespace dlsim
