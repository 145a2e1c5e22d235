#pragma once
// Stub of tsl/platform/strcat.h: StrCat/StrAppend through a string stream, Hex for addresses.
#include <cstdint>
#include <ios>
#include <sstream>
#include <string>

namespace tsl::strings {
struct Hex {
  explicit Hex(uint64_t v) : value(v) {}
  uint64_t value;
};
inline std::ostream& operator<<(std::ostream& os, Hex h) { return os << std::hex << h.value << std::dec; }

template <class... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream s;
  (s << ... << args);
  return s.str();
}
template <class... Args>
void StrAppend(std::string* dest, const Args&... args) {
  dest->append(StrCat(args...));
}
}  // namespace tsl::strings
