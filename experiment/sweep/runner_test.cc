#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "experiment/sweep/runner.h"

using namespace dlsim;

TEST_CASE("every task runs exactly once whatever the number of threads") {
  for (int jobs : {1, 2, 4, 16}) {
    std::mutex m;
    std::multiset<size_t> seen;
    run_on_threads(100, jobs, [&](size_t i) {
      const std::lock_guard<std::mutex> lock(m);
      seen.insert(i);
    });
    REQUIRE(seen.size() == 100);
    for (size_t i = 0; i < 100; ++i) CHECK(seen.count(i) == 1);
  }
  run_on_threads(0, 4, [](size_t) { FAIL("no task to run"); });
}

TEST_CASE("a stop request starts no further task") {
  std::atomic<bool> stop{false};
  std::atomic<int> ran{0};
  run_on_threads(1000, 2, [&](size_t i) {
    ++ran;
    if (i == 10) stop = true;
  }, &stop);
  CHECK(ran.load() >= 11);
  CHECK(ran.load() < 1000);
}

TEST_CASE("a task's exception reaches the caller after the threads finish") {
  SECTION("one thread: no task starts after the one that threw") {
    std::atomic<int> ran{0};
    CHECK_THROWS_WITH(run_on_threads(100, 1, [&](size_t i) {
      ++ran;
      if (i == 5) throw std::runtime_error("task 5");
    }), "task 5");
    CHECK(ran.load() == 6);
  }
  SECTION("three threads: the others finish the task in hand and take no more") {
    // Tasks after 5 hold until task 5 is about to throw, then give its thread time to record the failure, so the
    // result does not depend on how fast tiny tasks run (with no wait, two threads could run all 100 first).
    std::atomic<int> ran{0};
    std::atomic<bool> thrown{false};
    CHECK_THROWS_WITH(run_on_threads(100, 3, [&](size_t i) {
      ++ran;
      if (i == 5) {
        thrown = true;
        throw std::runtime_error("task 5");
      }
      if (i > 5) {
        while (!thrown.load()) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }), "task 5");
    CHECK(ran.load() < 100);
  }
}
