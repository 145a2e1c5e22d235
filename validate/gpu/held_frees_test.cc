#include "validate/gpu/held_frees.h"

#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>
#include <vector>

using dlsim::cuda::HeldFrees;

namespace {

// A stand-in for the CUDA runtime's events, with its rules: an event recorded on a stream completes some time
// later; one recorded during a capture is a node of the graph, and querying or synchronizing on it is refused
// (cudaEventSynchronize answers cudaErrorInvalidValue), as on the lent H200.
struct FakeEvents {
  std::set<int> completed;
  std::set<int> captured;
  std::vector<int> waited;
  bool done(int e) const {
    if (captured.count(e)) throw std::runtime_error("query of a captured event");
    return completed.count(e) > 0;
  }
  void wait(int e) {
    if (captured.count(e)) throw std::runtime_error("cudaEventSynchronize on a captured event: invalid value");
    waited.push_back(e);
  }
};

struct Released {
  std::vector<uint64_t> addrs;
  void operator()(const HeldFrees<int>::Hold& h) { addrs.push_back(h.addr); }
};

}  // namespace

TEST_CASE("held frees: a hold ends once every other stream's mark has completed, in the order made") {
  FakeEvents ev;
  HeldFrees<int> held;
  held.hold(0, 512, {1, 2});      // used on one other stream
  held.hold(512, 512, {3, 4, 5});  // used on two
  held.hold(1024, 512, {6, 7});
  Released r;
  auto done = [&](int e) { return ev.done(e); };
  ev.completed = {2, 4, 7};  // the allocation streams' own marks (1, 3, 6) are never asked
  held.release_completed(done, r);
  CHECK(r.addrs == std::vector<uint64_t>{0, 1024});
  CHECK(held.size() == 1);
  ev.completed.insert(5);
  held.release_completed(done, r);
  CHECK(r.addrs == std::vector<uint64_t>{0, 1024, 512});
  CHECK(held.empty());
}

TEST_CASE("held frees: release_all waits on every mark, the allocation stream's included") {
  FakeEvents ev;
  HeldFrees<int> held;
  held.hold(0, 512, {1, 2});
  held.hold(512, 512, {3, 4});
  Released r;
  held.release_all([&](int e) { ev.wait(e); }, r);
  CHECK(ev.waited == std::vector<int>{1, 2, 3, 4});
  CHECK(r.addrs == std::vector<uint64_t>{0, 512});
  CHECK(held.empty());
}

TEST_CASE("held frees: during a capture nothing is queried or waited on, and the holds end with the capture") {
  FakeEvents ev;
  HeldFrees<int> held;
  Released r;
  auto done = [&](int e) { return ev.done(e); };
  auto wait = [&](int e) { ev.wait(e); };
  held.capture_begin();
  CHECK(held.capturing());
  // Frees made during the capture: their marks are graph nodes.
  ev.captured = {1, 2, 3, 4};
  held.hold(0, 512, {1, 2});
  held.hold(512, 512, {3, 4});
  // Every allocation during the capture asks for completed holds, and an out-of-memory asks for all of them:
  // neither may touch a captured event (the lent H200's failure), nor end a hold early.
  REQUIRE_NOTHROW(held.release_completed(done, r));
  REQUIRE_NOTHROW(held.release_all(wait, r));
  CHECK(r.addrs.empty());
  CHECK(held.size() == 2);
  held.capture_end(r);
  CHECK_FALSE(held.capturing());
  CHECK(r.addrs == std::vector<uint64_t>{0, 512});
  CHECK(held.empty());
  CHECK(ev.waited.empty());
}

TEST_CASE("held frees: a hold made before a capture outlives it and is waited on after") {
  FakeEvents ev;
  HeldFrees<int> held;
  Released r;
  held.hold(0, 512, {1, 2});  // eager, still pending when the capture starts
  held.capture_begin();
  ev.captured = {3, 4};
  held.hold(512, 512, {3, 4});
  held.capture_end(r);
  CHECK(r.addrs == std::vector<uint64_t>{512});  // only the captured hold ends with the capture
  REQUIRE(held.size() == 1);
  // The device synchronisation after the capture waits on the eager hold's marks only.
  held.release_all([&](int e) { ev.wait(e); }, r);
  CHECK(ev.waited == std::vector<int>{1, 2});
  CHECK(r.addrs == std::vector<uint64_t>{512, 0});
}
