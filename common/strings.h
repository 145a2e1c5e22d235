#pragma once
// Small string helpers shared by every part: error messages list valid names, tables print numbers.
#include <cstdint>
#include <string>
#include <vector>

namespace dlsim {

// join({"a", "b", "c"}) == "a, b, c"; join({"a", "b"}, "/") == "a/b"; join({}) == "".
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");

// split("a,b,,c", ',') == {"a", "b", "c"}: the non-empty fields; split("", ',') == {}.
std::vector<std::string> split(const std::string& s, char sep);

// fixed(12.0034, 3) == "12.003": a number with `digits` decimals, as tables and CSV columns print it.
std::string fixed(double v, int digits);

// significant(1.0 / 3) == "0.333333", significant(2e9) == "2e+09", significant(0.1, 10) == "0.1": a number to
// `digits` significant digits, the shortest way ("%g": no trailing zeros), as messages and written files print
// values that are read back or compared by eye.
std::string significant(double v, int digits = 6);

// mib(3 << 20) == "3.0": bytes in MiB (2^20 B) with one decimal.
std::string mib(uint64_t bytes);

}  // namespace dlsim
