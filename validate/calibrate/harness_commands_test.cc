#include "validate/calibrate/harness_commands.h"

#include <catch2/catch.hpp>

#include <string>

#include "common/config_error.h"

using namespace dlsim;

TEST_CASE("trace text: malformed JSON, a number that overflows and a bad field are ConfigErrors naming the file") {
  // The overflowing number was a fuzz finding (fuzz/trace_json_fuzzer): nlohmann throws out_of_range, not
  // parse_error, for 425E22902528, and it escaped as an unexpected exception.
  for (const std::string text : {"{\"backend\": ", "{\"backend\":\"sim\",\"iterations\":[{\"end\":425E22902528}]}",
                                 "{\"backend\": 7}", "[]"}) {
    try {
      trace_from_text(text, "t.json");
      FAIL("expected ConfigError for " << text);
    } catch (const ConfigError& e) {
      CHECK(e.file() == "t.json");
    }
  }
}
