#include "program/freed_ranges.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace dlsim;

TEST_CASE("a reused range reports the marks of every range it overlaps and forgets only the overlap") {
  FreedRanges<int> r;
  r.add(0, 100, 1);
  r.add(100, 100, 2);
  r.add(300, 50, 3);
  std::vector<int> seen;
  r.take(50, 100, [&](int m) { seen.push_back(m); });  // [50, 150): half of 1, half of 2
  CHECK(seen == std::vector<int>{1, 2});
  CHECK(r.size() == 3);  // [0, 50) of 1, [150, 200) of 2, [300, 350) of 3

  seen.clear();
  r.take(50, 100, [&](int m) { seen.push_back(m); });  // already taken: nothing left there
  CHECK(seen.empty());
  r.take(0, 1000, [&](int m) { seen.push_back(m); });
  CHECK(seen == std::vector<int>{1, 2, 3});
  CHECK(r.size() == 0);
}

TEST_CASE("a range inside a freed one splits it in two") {
  FreedRanges<int> r;
  r.add(1000, 1000, 7);
  std::vector<int> seen;
  r.take(1200, 100, [&](int m) { seen.push_back(m); });
  CHECK(seen == std::vector<int>{7});
  seen.clear();
  r.take(1000, 200, [&](int m) { seen.push_back(m); });
  r.take(1300, 700, [&](int m) { seen.push_back(m); });
  CHECK(seen == std::vector<int>{7, 7});
  CHECK(r.size() == 0);
  r.add(5, 0, 9);  // zero bytes: nothing to reuse
  CHECK(r.size() == 0);
}
