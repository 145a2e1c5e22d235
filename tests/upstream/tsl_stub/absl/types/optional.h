#pragma once
// Stub: Abseil's optional is std::optional in C++17 builds of Abseil.
#include <optional>

namespace absl {
using std::nullopt;
using std::optional;
}  // namespace absl
