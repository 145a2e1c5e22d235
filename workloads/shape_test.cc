#include <catch2/catch.hpp>

#include "workloads/shape.h"

using namespace dlsim;

TEST_CASE("numel multiplies the dimensions, a scalar has one element") {
  CHECK(numel({2, 3, 4}) == 24);  // the examples in shape.h
  CHECK(numel({}) == 1);
  CHECK(numel({7}) == 7);
  CHECK(numel({50257, 768}) == int64_t{38597376});  // GPT-2's embedding: no overflow at int64
}

TEST_CASE("shape_str prints a shape as messages show it") {
  CHECK(shape_str({2, 3, 4}) == "[2,3,4]");
  CHECK(shape_str({}) == "[]");
  CHECK(shape_str({-1}) == "[-1]");
}
