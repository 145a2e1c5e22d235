#include <catch2/catch.hpp>

#include "common/strings.h"

using dlsim::join;

TEST_CASE("join puts the separator between items only") {
  CHECK(join({"a", "b", "c"}) == "a, b, c");  // the example in strings.h
  CHECK(join({"a", "b"}, "/") == "a/b");
  CHECK(join({"only"}) == "only");
  CHECK(join({}).empty());
  CHECK(join({"", ""}, "-") == "-");  // empty items still get their separator
}

TEST_CASE("fixed and mib print numbers as the tables do") {
  CHECK(dlsim::fixed(12.0034, 3) == "12.003");  // the examples in strings.h
  CHECK(dlsim::fixed(0.5, 0) == "0");            // round half to even, as printf does
  CHECK(dlsim::fixed(-1.25, 1) == "-1.2");
  CHECK(dlsim::mib(3 << 20) == "3.0");
  CHECK(dlsim::mib(1536 * 1024) == "1.5");
  CHECK(dlsim::mib(0) == "0.0");
}

TEST_CASE("split keeps the non-empty fields") {
  CHECK(dlsim::split("a,b,,c", ',') == std::vector<std::string>{"a", "b", "c"});
  CHECK(dlsim::split("", ',').empty());
  CHECK(dlsim::split(",x,", ',') == std::vector<std::string>{"x"});
}
