#pragma once
// Small string helpers shared by every part (error messages list valid names, tables list parameters).
#include <string>
#include <vector>

namespace dlsim {

// join({"a", "b", "c"}) == "a, b, c"; join({"a", "b"}, "/") == "a/b"; join({}) == "".
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");

}  // namespace dlsim
