#include <catch2/catch.hpp>

#include "experiment/sweep/csv_line.h"

using namespace dlsim;

TEST_CASE("a CSV line splits back into the fields that were escaped into it") {
  const std::vector<std::string> fields = {"plain", "with,comma", "with \"quote\"", "", "multi\nline", "cnmem(a=1,b=2)"};
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csv_escape(fields[i]);
  std::vector<std::string> back;
  REQUIRE(split_csv_line(line, back));
  CHECK(back == fields);
  CHECK(csv_escape("plain") == "plain");
  CHECK(csv_escape("a,b") == "\"a,b\"");
}

TEST_CASE("an unclosed quote is reported, not read as a field") {
  std::vector<std::string> back;
  CHECK_FALSE(split_csv_line("a,\"b,c", back));
  REQUIRE(split_csv_line(",,", back));
  CHECK(back.size() == 3);
}
