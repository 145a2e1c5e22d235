#include "sim/check/copy_matching.h"

#include <catch2/catch.hpp>

using namespace dlsim;

namespace {

Command copy(CmdKind k, int stream, TensorId t) {
  Command c;
  c.kind = k;
  c.stream = static_cast<int16_t>(stream);
  c.tensor = t;
  return c;
}

}  // namespace

TEST_CASE("copy matching: two copies of one tensor on two streams, the later-issued one starting first") {
  // save-on-cpu style: tensor 7 copied in on stream 1, then on stream 4; stream 4's copy starts first.
  const std::vector<Command> cmds = {copy(CmdKind::CopyIn, 1, 7), copy(CmdKind::CopyIn, 4, 7), copy(CmdKind::CopyOut, 5, 7)};
  Trace tr;
  tr.copies.push_back({0, 7, false, 8, 300, 500, 4});
  tr.copies.push_back({0, 7, false, 8, 350, 550, 1});
  tr.copies.push_back({0, 7, true, 8, 10, 20, 5});
  tr.copies.push_back({1, 7, false, 8, 1300, 1500, 1});  // another iteration
  const auto m = match_copies(cmds, tr, 0);
  REQUIRE(m.size() == 3);
  REQUIRE(m[0] != nullptr);
  CHECK(m[0]->stream == 1);
  CHECK(m[0]->start == 350);
  REQUIRE(m[1] != nullptr);
  CHECK(m[1]->start == 300);
  REQUIRE(m[2] != nullptr);
  CHECK(m[2]->to_host);
}

TEST_CASE("copy matching: a trace without streams is matched on tensor and direction by start, a missing record is null") {
  const std::vector<Command> cmds = {copy(CmdKind::CopyIn, 1, 7), copy(CmdKind::Launch, 0, kNoTensor), copy(CmdKind::CopyIn, 4, 7),
                                     copy(CmdKind::CopyIn, 4, 7)};
  Trace tr;
  tr.copies.push_back({0, 7, false, 8, 300, 500});
  tr.copies.push_back({0, 7, false, 8, 100, 200});
  const auto m = match_copies(cmds, tr, 0);
  REQUIRE(m[0] != nullptr);
  CHECK(m[0]->start == 100);
  CHECK(m[1] == nullptr);
  REQUIRE(m[2] != nullptr);
  CHECK(m[2]->start == 300);
  CHECK(m[3] == nullptr);
}
