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
