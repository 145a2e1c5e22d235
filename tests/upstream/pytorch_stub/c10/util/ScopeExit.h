#pragma once
// Stand-in for c10/util/ScopeExit.h (upstream replay): runs a callable when the guard dies.
#include <utility>
namespace c10 {
template <typename F>
class ScopeExit {
 public:
  explicit ScopeExit(F f) : f_(std::move(f)) {}
  ScopeExit(const ScopeExit&) = delete;
  ~ScopeExit() { f_(); }

 private:
  F f_;
};
template <typename F>
ScopeExit<F> make_scope_exit(F f) {
  return ScopeExit<F>(std::move(f));
}
}  // namespace c10
