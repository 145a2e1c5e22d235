#pragma once
// A segment tree over time sections holding one number per section, with range add and range/global max.
// The capacity search keeps the unplaced bytes per section in it. Adds are stored at the covering nodes and
// never pushed down, so an add is undone by adding the opposite amount.
#include <cstdint>
#include <vector>

namespace dlsim {

class SectionTree {
 public:
  explicit SectionTree(const std::vector<int64_t>& values);
  void add(int first, int last, int64_t delta);  // sections [first, last], inclusive
  int64_t max_all() const { return n_ == 0 ? 0 : max_[1]; }
  int64_t max_range(int first, int last) const { return query(1, 0, n_ - 1, first, last); }

 private:
  void build(int node, int lo, int hi, const std::vector<int64_t>& v);
  void update(int node, int lo, int hi, int a, int b, int64_t d);
  int64_t query(int node, int lo, int hi, int a, int b) const;
  int n_;
  std::vector<int64_t> max_;  // max over the node's range, including the node's own pending add
  std::vector<int64_t> add_;
};

}  // namespace dlsim
