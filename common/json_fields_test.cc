#include "common/json_fields.h"

#include <catch2/catch.hpp>

#include "common/testing/config_error_of.h"

using dlsim::JsonFields;
using Json = nlohmann::json;

using dlsim::testing::config_error_of;

TEST_CASE("json fields: values of the right type and range are read") {
  const Json j = Json::parse(R"({"name": "conv", "n": 32, "us": 12.5, "on": true, "xs": [1, 2], "o": {"a": 1}})");
  const JsonFields f(j, "sweep.json", "records[3]");
  CHECK(f.text("name") == "conv");
  CHECK(f.integer("n", 1, 64) == 32);
  CHECK(f.number("us", 0, 1e9, true) == 12.5);
  CHECK(f.flag("on"));
  CHECK(f.array("xs").size() == 2);
  CHECK(f.object("o").integer("a", 0, 1) == 1);
  CHECK(f.object("o").where() == "records[3].o");
  CHECK(f.element(f.array("xs"), "xs", 1).where() == "records[3].xs[1]");
  CHECK(f.integer_of(f.array("xs")[1], "xs[1]", 0, 2) == 2);
  CHECK(f.has("n"));
  CHECK_FALSE(f.has("missing"));
}

TEST_CASE("json fields: each refusal names the file, the dotted field and what it must be") {
  const Json j = Json::parse(R"({"n": "32", "big": 18446744073709551615, "neg": -3, "us": 0, "f": 3.0,
                                 "s": 1, "l": {}, "extra": null})");
  const JsonFields f(j, "sweep.json", "records[3]");
  CHECK_THAT(config_error_of([&] { f.at("absent"); }), Catch::Contains("sweep.json") && Catch::Contains("'records[3].absent'") &&
                                                    Catch::Contains("missing"));
  CHECK_THAT(config_error_of([&] { f.integer("n", 1, 64); }), Catch::Contains("records[3].n") &&
                                                          Catch::Contains("must be an integer in [1, 64], got \"32\""));
  CHECK_THAT(config_error_of([&] { f.integer("f", 1, 64); }), Catch::Contains("must be an integer"));  // 3.0 is a float
  // 2^64 - 1 must not wrap round to -1 and pass a range that holds -1.
  CHECK_THAT(config_error_of([&] { f.integer("big", -5, 5); }), Catch::Contains("must be in [-5, 5]"));
  CHECK_THAT(config_error_of([&] { f.integer("neg", 0, 5); }), Catch::Contains("must be in [0, 5], got -3"));
  CHECK_THAT(config_error_of([&] { f.number("us", 0, 1e9, true, "us"); }), Catch::Contains("must be in (0, 1e+09] us"));
  CHECK(config_error_of([&] { f.number("us", 0, 1e9); }).empty());  // a closed bound takes its end
  CHECK_THAT(config_error_of([&] { f.text("s"); }), Catch::Contains("must be a string, got 1"));
  CHECK_THAT(config_error_of([&] { f.array("l"); }), Catch::Contains("must be a list"));
  CHECK_THAT(config_error_of([&] { f.object("s"); }), Catch::Contains("records[3].s") && Catch::Contains("must be an object"));
  CHECK_THAT(config_error_of([&] { f.allow_only({"n"}, "for op 'gemm'"); }),
             Catch::Contains("unknown field for op 'gemm'; valid: n"));
  CHECK_FALSE(f.has("extra"));  // null is absent
  const Json list = Json::parse("[1, -4]");
  CHECK_THAT(config_error_of([&] { f.integer_of(list[1], "dims[1]", 0, 9); }),
             Catch::Contains("'records[3].dims[1]'") && Catch::Contains("must be in [0, 9], got -4"));
}

TEST_CASE("json fields: at the document's top the field stands alone") {
  const Json j = Json::parse(R"({"version": "2"})");
  const JsonFields f(j, "trace.json", "");
  CHECK_THAT(config_error_of([&] { f.integer("version", 1, 1); }), Catch::Contains("'version'"));
  const Json arr = Json::parse("[1]");
  CHECK_THAT(config_error_of([&] { JsonFields(arr, "trace.json", "").require_object(); }), Catch::Contains("must be an object"));
}
