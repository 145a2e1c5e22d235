#pragma once
// Stand-in for c10/util/Exception.h: the checks PyTorch's caching allocator makes, as exceptions. Written for the
// upstream replay (tests/upstream/README.md); nothing here is PyTorch's code.
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>

namespace c10 {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// What TORCH_CHECK_WITH(OutOfMemoryError, ...) throws: the allocator's out-of-memory answer.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

namespace detail {
template <typename... Args>
std::string str(const Args&... args) {
  std::ostringstream s;
  ((s << args), ...);
  return s.str();
}
}  // namespace detail

}  // namespace c10

#define TORCH_CHECK_WITH(error_t, cond, ...)                                            \
  if (!(cond)) {                                                                        \
    throw ::c10::error_t(::c10::detail::str("check failed: " #cond " ", ##__VA_ARGS__)); \
  }
#define TORCH_CHECK(cond, ...) TORCH_CHECK_WITH(Error, cond, ##__VA_ARGS__)
#define TORCH_INTERNAL_ASSERT(cond, ...) TORCH_CHECK_WITH(Error, cond, "internal assert ", ##__VA_ARGS__)
#define TORCH_INTERNAL_ASSERT_DEBUG_ONLY(cond, ...) TORCH_INTERNAL_ASSERT(cond, ##__VA_ARGS__)
#define AT_ASSERT(cond, ...) TORCH_INTERNAL_ASSERT(cond, ##__VA_ARGS__)
#define TORCH_WARN(...) \
  { std::fprintf(stderr, "%s\n", ::c10::detail::str(__VA_ARGS__).c_str()); }
#define TORCH_WARN_ONCE(...) TORCH_WARN(__VA_ARGS__)
