#include "experiment/snapshot/memory_snapshot.h"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <string>

#include "experiment/experiment.h"
#include "experiment/snapshot/pickle_writer.h"
#include "experiment/run_experiment.h"

using namespace dlsim;
using json = nlohmann::json;

namespace {

struct Replayed {
  uint64_t peak_live = 0;
  uint64_t peak_reserved = 0;
  uint64_t live_at_end = 0;
  uint64_t reserved_at_end = 0;
};

// What a viewer reads off the trace: live bytes (alloc up, free_requested down) and reserved bytes (segments).
// Whether [addr, addr + size) lies in the pool's memory: one piece, or mapped pieces side by side.
bool inside(const std::map<uint64_t, uint64_t>& pieces, uint64_t addr, uint64_t size) {
  uint64_t at = addr;
  while (at < addr + size) {
    auto it = pieces.upper_bound(at);
    if (it == pieces.begin()) return false;
    --it;
    if (at >= it->first + it->second) return false;
    at = it->first + it->second;
  }
  return true;
}

Replayed replay(const json& trace) {
  Replayed r;
  int64_t live = 0, reserved = 0;
  std::map<uint64_t, uint64_t> pieces;  // the pool's cudaMallocs and mappings at this point of the trace
  for (const json& e : trace) {
    const std::string a = e["action"];
    const auto size = e["size"].get<int64_t>();
    const auto addr = e["addr"].get<uint64_t>();
    if (a == "segment_alloc" || a == "segment_map") pieces[addr] = static_cast<uint64_t>(size);
    if (a == "segment_free") pieces.erase(addr);
    if (a == "segment_unmap") pieces.erase(pieces.lower_bound(addr), pieces.lower_bound(addr + static_cast<uint64_t>(size)));
    if (a == "alloc") {
      CAPTURE(addr, size);
      CHECK(inside(pieces, addr, static_cast<uint64_t>(size)));  // the segment comes before the tensor in it
    }
    if (a == "alloc") live += size;
    else if (a == "free_requested") live -= size;
    else if (a == "segment_alloc" || a == "segment_map") reserved += size;
    else if (a == "segment_free" || a == "segment_unmap") reserved -= size;
    REQUIRE(live >= 0);
    REQUIRE(reserved >= 0);
    r.peak_live = std::max(r.peak_live, static_cast<uint64_t>(live));
    r.peak_reserved = std::max(r.peak_reserved, static_cast<uint64_t>(reserved));
  }
  r.live_at_end = static_cast<uint64_t>(live);
  r.reserved_at_end = static_cast<uint64_t>(reserved);
  return r;
}

json snapshot_of(const std::string& yaml, ExperimentResult* result = nullptr) {
  const Experiment e = experiment_from_yaml(YAML::Load(yaml), "<test>");
  RunArtifacts a;
  ExperimentResult r = run_experiment(e, &a);
  if (result) *result = r;
  return memory_snapshot(a.trace, a.graph, a.allocations, a.iterations);
}

}  // namespace

TEST_CASE("memory snapshot: every pool's trace peaks at dlsim's peak live and reserved, and segments add up") {
  const std::string pool = GENERATE(as<std::string>{}, "cuda-malloc", "cnmem", "pytorch-caching",
                                    "{name: pytorch-caching, expandable_segments: true}", "tf-bfc", "smartpool",
                                    "planned");
  CAPTURE(pool);
  ExperimentResult r;
  const json s = snapshot_of("model: cifar-resnet20\nbatch: 16\nhw: h100-sxm\npool: " + pool +
                                 "\nswap: none\nconcurrency: serial\niterations: 3\n",
                             &r);
  REQUIRE_FALSE(r.oom);
  REQUIRE(s["device_traces"].size() == 1);
  const Replayed t = replay(s["device_traces"][0]);
  CHECK(t.peak_live == r.peak_live_bytes);
  CHECK(t.peak_reserved == r.peak_reserved_bytes);
  // The segments are the reservations at the end of the trace, and their active blocks the live tensors then.
  uint64_t total = 0, active = 0;
  for (const json& seg : s["segments"]) {
    uint64_t sum = 0, at = seg["address"];
    for (const json& b : seg["blocks"]) {
      CHECK(b["address"].get<uint64_t>() == at);  // blocks tile the segment in address order
      at += b["size"].get<uint64_t>();
      sum += b["size"].get<uint64_t>();
      if (b["state"] != "inactive") {
        active += b["size"].get<uint64_t>();
        REQUIRE(b["frames"].size() == 1);
        CHECK_FALSE(b["frames"][0]["name"].get<std::string>().empty());
      }
    }
    CHECK(sum == seg["total_size"].get<uint64_t>());
    CHECK(seg["allocated_size"].get<uint64_t>() <= sum);
    total += sum;
  }
  CHECK(total == t.reserved_at_end);
  CHECK(active == t.live_at_end);
  CHECK(t.live_at_end > 0);  // the snapshot is before teardown: weights and optimizer state are live
}

TEST_CASE("memory snapshot: entries are in time order and name each tensor's kind") {
  const json s = snapshot_of("model: cifar-resnet20\nbatch: 16\nhw: h100-sxm\npool: pytorch-caching\nswap: none\n"
                             "concurrency: serial\niterations: 2\n");
  const json& trace = s["device_traces"][0];
  REQUIRE(trace.size() > 10);
  int64_t last = 0;
  std::map<std::string, int> kinds;
  for (const json& e : trace) {
    CHECK(e["time_us"].get<int64_t>() >= last);
    last = e["time_us"];
    if (e["action"] == "alloc") kinds[e["frames"][0]["filename"]]++;
  }
  for (const char* k : {"weight", "activation", "gradient", "optimizer_state"}) {
    CAPTURE(k);
    CHECK(kinds[k] > 0);
  }
  // Every free completes after it was requested, at the same address.
  std::map<uint64_t, int> open;
  for (const json& e : trace) {
    if (e["action"] == "free_requested") open[e["addr"]]++;
    if (e["action"] == "free_completed") {
      REQUIRE(open[e["addr"]] > 0);
      open[e["addr"]]--;
    }
  }
}

TEST_CASE("memory snapshot: a run on several streams holds frees and still peaks where dlsim says") {
  ExperimentResult r;
  const json s = snapshot_of("model: resnet50\nbatch: 8\nhw: h100-sxm\npool: pytorch-caching\nswap: none\n"
                             "concurrency: branch-streams\niterations: 2\n",
                             &r);
  const Replayed t = replay(s["device_traces"][0]);
  CHECK(t.peak_live == r.peak_live_bytes);
  CHECK(t.peak_reserved == r.peak_reserved_bytes);
}

TEST_CASE("memory snapshot: swapped runs (tensors freed and allocated again) still peak where dlsim says") {
  const std::string swap = GENERATE(as<std::string>{}, "{name: vdnn, policy: all}", "save-on-cpu",
                                    "{name: singa, mode: no-overhead, rank: vote, limit_fraction: 0.5}");
  CAPTURE(swap);
  ExperimentResult r;
  const json s = snapshot_of("model: cifar-resnet20\nbatch: 32\nhw: h100-sxm\npool: pytorch-caching\nswap: " + swap +
                                 "\nconcurrency: serial\niterations: 3\n",
                             &r);
  const Replayed t = replay(s["device_traces"][0]);
  CHECK(t.peak_live == r.peak_live_bytes);
  CHECK(t.peak_reserved == r.peak_reserved_bytes);
}

TEST_CASE("memory snapshot: the same run gives the same pickled bytes") {
  const std::string exp = "model: cifar-resnet20\nbatch: 16\nhw: h100-sxm\npool: cnmem\nswap: none\n"
                          "concurrency: serial\niterations: 2\n";
  const std::string a = to_pickle(snapshot_of(exp));
  CHECK(a.size() > 1000);
  CHECK(a == to_pickle(snapshot_of(exp)));
}
