#include <catch2/catch.hpp>

#include <sstream>

#include "experiment/sweep/progress.h"

using namespace dlsim;

TEST_CASE("off a terminal, progress is a plain line per finished point") {
  std::ostringstream out;
  SweepProgress p(out, SweepProgress::Style::Lines, 4, 1);  // one point resumed
  p.finished("resnet50 b32", "ok", false);
  p.finished("vgg16 b32", "error (boom)", true);
  p.close();
  const std::string text = out.str();
  CHECK_THAT(text, Catch::StartsWith("[2/4] resnet50 b32: ok\n[3/4] vgg16 b32: error (boom)\n3/4 done, 1 failed, "));
  CHECK(text.find('\r') == std::string::npos);
  CHECK(p.done() == 3);
  CHECK(p.failures() == 1);
}

TEST_CASE("on a terminal, progress is one line rewritten with done, failures, elapsed and ETA") {
  std::ostringstream out;
  SweepProgress p(out, SweepProgress::Style::Terminal, 3, 0);
  p.finished("a", "ok", false);
  CHECK_THAT(out.str(), Catch::StartsWith("\r\033[K1/3 done, ") && Catch::Contains("elapsed, ETA "));
  p.finished("b", "error (x)", true);
  CHECK_THAT(out.str(), Catch::Contains("\r\033[Kb: error (x)\n"));  // a failure stays on screen
  p.close();
  CHECK_THAT(out.str(), Catch::EndsWith("\n") && Catch::Contains("2/3 done, 1 failed"));
}

TEST_CASE("durations read as seconds, minutes or hours") {
  CHECK(duration_text(4.25) == "4.2 s");
  CHECK(duration_text(185) == "3 min 05 s");
  CHECK(duration_text(7620) == "2 h 07 min");
}

TEST_CASE("a quiet sweep prints nothing") {
  std::ostringstream out;
  SweepProgress p(out, SweepProgress::Style::Quiet, 2, 0);
  p.finished("a", "ok", false);
  p.close();
  CHECK(out.str().empty());
}
