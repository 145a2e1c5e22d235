#pragma once
// Stub: Abseil's string_view is std::string_view in C++17 builds of Abseil.
#include <string_view>

namespace absl {
using std::string_view;
}  // namespace absl
