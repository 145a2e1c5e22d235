#include <catch2/catch.hpp>

#include <sstream>

#include "common/config_error.h"
#include "policies/planners/instance_csv.h"

using namespace dlsim;

namespace {
// The ConfigError thrown for `text`, or fails the test.
ConfigError error_of(const std::string& text) {
  std::istringstream in(text);
  try {
    read_instance_csv(in, "x.csv");
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("no ConfigError for: " << text);
  return ConfigError("", 0, "", "");
}
}  // namespace

TEST_CASE("instance CSV: columns by header name, extra columns ignored, blank lines skipped") {
  std::istringstream in("size,upper,offset,lower,id\n10,5,0,1,7\n\n 20 , 9 ,3, 2 ,8\r\n");
  const auto b = read_instance_csv(in, "x.csv");
  REQUIRE(b.size() == 2);
  CHECK(b[0].id == 7);
  CHECK(b[0].lower == 1);
  CHECK(b[0].upper == 5);
  CHECK(b[0].size == 10);
  CHECK(b[1].id == 8);
  CHECK(b[1].size == 20);
}

TEST_CASE("instance CSV: malformed lines name the file, the line and the field") {
  auto e = error_of("id,lower,upper,size\n1,0,5,10\n2,0,x,10\n");
  CHECK(e.file() == "x.csv");
  CHECK(e.line() == 3);
  CHECK(e.key() == "upper");
  e = error_of("id,lower,upper\n1,0,5\n");
  CHECK(e.line() == 1);
  CHECK(e.key() == "size");
  e = error_of("id,lower,upper,size\n1,0,5\n");
  CHECK(e.line() == 2);
  CHECK(e.key() == "size");
  e = error_of("id,lower,upper,size\n1,5,5,10\n");
  CHECK(e.key() == "upper");
  e = error_of("id,lower,upper,size\n1,0,5,0\n");
  CHECK(e.key() == "size");
  e = error_of("id,lower,upper,size\n1,0,5,-3\n");
  CHECK(e.key() == "size");
  e = error_of("id,lower,upper,size\n1,0,5,3\n\n1,1,2,3\n");
  CHECK(e.line() == 4);
  CHECK(e.key() == "id");
  e = error_of("id,lower,upper,size\n1,0,5,3.5\n");
  CHECK(e.key() == "size");
  e = error_of("");
  CHECK(e.line() == 0);
  CHECK_THROWS_AS(read_instance_csv("/nonexistent/instance.csv"), ConfigError);
}

TEST_CASE("instance CSV: a written solution reads back with the same buffers") {
  const std::vector<DsaBuffer> b = {{3, 0, 4, 100}, {-1, 2, 6, 50}};
  std::ostringstream out;
  write_solution_csv(out, b, {0, 100});
  CHECK(out.str() == "id,lower,upper,size,offset\n3,0,4,100,0\n-1,2,6,50,100\n");
  std::istringstream in(out.str());
  const auto back = read_instance_csv(in, "y.csv");
  REQUIRE(back.size() == 2);
  CHECK(back[1].id == -1);
  CHECK(back[1].size == 50);
}

TEST_CASE("instance CSV: sizes summing past 2^63 bytes are an error at the line that crosses it") {
  // Three buffers of 2^63 - 1 bytes, all live at once: the optimal planner put the third at offset 2^64 - 2, its
  // end wrapped, and the checker (which compared wrapped addresses) called the placement valid.
  const std::string big = "9223372036854775807";
  const ConfigError e = error_of("id,lower,upper,size\n0,0,10," + big + "\n1,0,10,1\n2,0,10," + big + "\n");
  CHECK(e.line() == 4);
  CHECK(e.key() == "size");
  CHECK(e.message() == "the sizes so far sum past 9223372036854775808 bytes (2^63), the most an instance may hold: "
                       "a placement's addresses would wrap");
  std::istringstream at_limit("id,lower,upper,size\n0,0,10," + big + "\n1,0,10,1\n");
  CHECK(read_instance_csv(at_limit, "x.csv").size() == 2);  // exactly 2^63 in all still reads
}
