#include "sim/event_queue.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <tuple>

using namespace dlsim;

TEST_CASE("events come out by time, then in the order they were scheduled") {
  EventQueue q(4);
  q.push(30, 1, 100);
  q.push(10, 2, 200);
  q.push(30, 3, 300);
  q.push(10, 4, 400);
  q.push(20, 5, 500);
  std::vector<uint32_t> payloads;
  std::vector<TimeNs> times;
  while (!q.empty()) {
    const Event e = q.pop();
    payloads.push_back(e.payload);
    times.push_back(e.time);
  }
  CHECK(times == std::vector<TimeNs>{10, 10, 20, 30, 30});
  CHECK(payloads == std::vector<uint32_t>{200, 400, 500, 100, 300});
  CHECK(q.pushed() == 5);
  CHECK_THROWS_AS(q.pop(), std::logic_error);
}

TEST_CASE("the heap agrees with a sort by (time, seq) on random interleaved pushes and pops") {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<TimeNs> dt(0, 50);  // many ties
  EventQueue q;
  std::vector<Event> reference;  // kept sorted by hand
  TimeNs now = 0;
  for (int step = 0; step < 20000; ++step) {
    if (reference.empty() || rng() % 3 != 0) {
      const TimeNs t = now + dt(rng);
      const uint64_t seq = q.push(t, 7, static_cast<uint32_t>(step), static_cast<uint32_t>(step * 3));
      reference.push_back(Event{t, seq, static_cast<uint32_t>(step), static_cast<uint32_t>(step * 3), 7});
    } else {
      auto it = std::min_element(reference.begin(), reference.end(), [](const Event& a, const Event& b) {
        return std::tie(a.time, a.seq) < std::tie(b.time, b.seq);
      });
      const Event got = q.pop();
      REQUIRE(got.time == it->time);
      REQUIRE(got.seq == it->seq);
      REQUIRE(got.payload == it->payload);
      REQUIRE(got.generation == it->generation);
      REQUIRE(got.type == 7);
      now = got.time;
      reference.erase(it);
    }
    REQUIRE(q.size() == reference.size());
  }
}
