#include "experiment/snapshot/pickle_writer.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

namespace dlsim {
namespace {

// The bytes between the protocol header (0x80 0x02) and STOP.
std::string body(const nlohmann::json& v) {
  const std::string p = to_pickle(v);
  REQUIRE(p.size() >= 3);
  CHECK(p.substr(0, 2) == std::string("\x80\x02", 2));
  CHECK(p.back() == '.');
  return p.substr(2, p.size() - 3);
}

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s += static_cast<char>(c);
  return s;
}

}  // namespace

TEST_CASE("to_pickle: scalars use the smallest integer opcode and Python's constants") {
  CHECK(body(nullptr) == "N");
  CHECK(body(true) == bytes({0x88}));
  CHECK(body(false) == bytes({0x89}));
  CHECK(body(0) == bytes({'K', 0}));
  CHECK(body(255) == bytes({'K', 0xff}));
  CHECK(body(256) == bytes({'M', 0x00, 0x01}));
  CHECK(body(65535) == bytes({'M', 0xff, 0xff}));
  CHECK(body(65536) == bytes({'J', 0x00, 0x00, 0x01, 0x00}));
  CHECK(body(-1) == bytes({'J', 0xff, 0xff, 0xff, 0xff}));
  CHECK(body(INT32_MIN) == bytes({'J', 0x00, 0x00, 0x00, 0x80}));
}

TEST_CASE("to_pickle: integers beyond 32 bits are LONG1 in minimal two's complement") {
  CHECK(body(int64_t{1} << 40) == bytes({0x8a, 6, 0, 0, 0, 0, 0, 1}));
  CHECK(body(-(int64_t{1} << 40)) == bytes({0x8a, 6, 0, 0, 0, 0, 0, 0xff}));
  CHECK(body(int64_t{INT32_MAX} + 1) == bytes({0x8a, 5, 0, 0, 0, 0x80, 0}));  // sign byte keeps it positive
  CHECK(body(uint64_t{1} << 63) == bytes({0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0x80, 0}));
  CHECK(body(UINT64_MAX) == bytes({0x8a, 9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0}));
  CHECK(body(INT64_MIN) == bytes({0x8a, 8, 0, 0, 0, 0, 0, 0, 0, 0x80}));
}

TEST_CASE("to_pickle: floats are big-endian doubles, strings length-prefixed UTF-8") {
  CHECK(body(1.5) == bytes({'G', 0x3f, 0xf8, 0, 0, 0, 0, 0, 0}));
  CHECK(body("ab") == bytes({'X', 2, 0, 0, 0, 'a', 'b'}));
  CHECK(body("\xc3\xa9") == bytes({'X', 2, 0, 0, 0, 0xc3, 0xa9}));  // bytes, not characters
}

TEST_CASE("to_pickle: lists and dicts are filled between a mark and one APPENDS/SETITEMS") {
  CHECK(body(nlohmann::json::array()) == "]");
  CHECK(body(nlohmann::json::object()) == "}");
  CHECK(body(nlohmann::json::array({1, "x"})) == bytes({']', '(', 'K', 1, 'X', 1, 0, 0, 0, 'x', 'e'}));
  nlohmann::json d;
  d["k"] = nullptr;
  CHECK(body(d) == bytes({'}', '(', 'X', 1, 0, 0, 0, 'k', 'N', 'u'}));
  // Nested containers close innermost first.
  nlohmann::json n;
  n["a"] = nlohmann::json::array({nlohmann::json::array({true})});
  CHECK(body(n) == bytes({'}', '(', 'X', 1, 0, 0, 0, 'a', ']', '(', ']', '(', 0x88, 'e', 'e', 'u'}));
}

TEST_CASE("to_pickle: binary JSON values are refused, not written wrong") {
  CHECK_THROWS_AS(to_pickle(nlohmann::json::binary({1, 2})), std::invalid_argument);
}

}  // namespace dlsim
