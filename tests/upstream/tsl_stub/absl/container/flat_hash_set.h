#pragma once
// Stub of Abseil's flat_hash_set for TensorFlow's bfc_allocator.cc: the standard unordered set with contains().
// bfc_allocator.cc only inserts region pointers and asks membership, so iteration order never matters.
#include <unordered_set>

namespace absl {
template <class T>
class flat_hash_set : public std::unordered_set<T> {
 public:
  bool contains(const T& v) const { return this->count(v) != 0; }
};
}  // namespace absl
