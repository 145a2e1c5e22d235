#pragma once
// Stand-in for c10/util/irange.h (upstream replay): integer ranges [begin, end) of the end's type.
#include <type_traits>
namespace c10 {
template <typename I>
class integer_range {
 public:
  struct iterator {
    I v;
    I operator*() const { return v; }
    iterator& operator++() {
      ++v;
      return *this;
    }
    bool operator!=(const iterator& o) const { return v != o.v; }
  };
  integer_range(I b, I e) : b_(b), e_(e < b ? b : e) {}
  iterator begin() const { return {b_}; }
  iterator end() const { return {e_}; }

 private:
  I b_, e_;
};
template <typename I>
integer_range<I> irange(I end) {
  return integer_range<I>(I{0}, end);
}
template <typename I1, typename I2>
integer_range<I2> irange(I1 begin, I2 end) {
  return integer_range<I2>(static_cast<I2>(begin), end);
}
}  // namespace c10
