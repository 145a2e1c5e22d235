#include <catch2/catch.hpp>

#include "common/param_check.h"

using namespace dlsim;

TEST_CASE("numeric checks accept their range and say why they refuse a value") {
  const ParamCheck ge0 = ParamCheck::at_least(0);
  CHECK_FALSE(ge0.violation(int64_t{0}));
  CHECK_FALSE(ge0.violation(2.5));
  CHECK(*ge0.violation(int64_t{-5}) == "must be >= 0, got -5");  // the example in param_check.h
  CHECK(ge0.text() == ">= 0");

  CHECK(ParamCheck::greater_than(0).violation(0.0));
  CHECK_FALSE(ParamCheck::greater_than(0).violation(1e-9));
  CHECK(ParamCheck::in_range(0, 1).text() == "[0, 1]");
  CHECK(*ParamCheck::in_range(0, 1).violation(1.5) == "must be in [0, 1], got 1.5");
  CHECK_FALSE(ParamCheck::in_range(0, 1).violation(1.0));
  CHECK(ParamCheck::above_up_to(0, 1).violation(0.0));
  CHECK_FALSE(ParamCheck::above_up_to(0, 1).violation(1.0));
  CHECK(ParamCheck::between(0, 1).violation(1.0));
  CHECK(ParamCheck::between(0, 1).text() == "(0, 1)");
}

TEST_CASE("power_of_two, zero_or and one_of") {
  const ParamCheck p2 = ParamCheck::zero_or(ParamCheck::power_of_two());
  for (int64_t ok : {0, 1, 2, 4, 1024}) CHECK_FALSE(p2.violation(ok));
  for (int64_t bad : {-4, 3, 6, 1000}) CHECK(p2.violation(bad));
  CHECK(p2.text() == "0 or a power of two");
  CHECK(*ParamCheck::zero_or(ParamCheck::at_least(20)).violation(int64_t{10}) == "must be 0 or >= 20, got 10");

  const ParamCheck color = ParamCheck::one_of({"BF", "FF"});
  CHECK_FALSE(color.violation(std::string("FF")));
  CHECK(*color.violation(std::string("XF")) == "unknown value 'XF'; valid: BF, FF");
  CHECK(color.text() == "BF, FF");
  CHECK(color.violation(int64_t{1}));  // a number is never a choice
}

TEST_CASE("the default check accepts anything") {
  const ParamCheck any;
  CHECK(any.accepts_any());
  CHECK(any.text().empty());
  CHECK_FALSE(any.violation(int64_t{-1}));
  CHECK_FALSE(any.violation(std::string("x")));
}
