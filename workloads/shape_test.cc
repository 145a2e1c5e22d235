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

TEST_CASE("checked products say when a count would not fit in 64 bits instead of wrapping") {
  CHECK(checked_numel({2, 3, 4}) == 24);
  CHECK(checked_numel({}) == 1);
  CHECK(checked_numel({32, 3, 4000000000, 4000000000}) == std::nullopt);  // image_size 4e9 used to wrap
  CHECK(checked_numel({int64_t{1} << 31, int64_t{1} << 31}) == int64_t{1} << 62);
  CHECK(checked_numel({int64_t{1} << 32, int64_t{1} << 31}) == std::nullopt);
  CHECK(checked_numel({-1, 4}) == std::nullopt);
  CHECK(checked_product({256, 512, 3, 3}) == 1179648);
  CHECK(checked_product({int64_t{1} << 40, int64_t{1} << 30}) == std::nullopt);
}
