#include "validate/calibrate/harness_commands.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/config_error.h"
#include "experiment/experiment.h"
#include "experiment/experiment_pool.h"
#include "experiment/run_experiment.h"
#include "hw/gpu_spec_file.h"
#include "hw/hardware.h"
#include "policies/pool/virtual_device_memory.h"
#include "sim/executor.h"
#include "validate/calibrate/compare.h"
#include "validate/gpu/microbench_records.h"

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

namespace {

namespace fs = std::filesystem;

// A validate folder as `dlsim validate` leaves it, with the simulator standing in for the GPU: plan.json and a
// trace.cuda.json of that plan (3 iterations, the first a warm-up), the trace carrying the plan's fingerprint.
struct ValidateDir {
  fs::path dir;
  ProgramFile plan;
  Trace trace;

  explicit ValidateDir(const std::string& name) : dir(fs::temp_directory_path() / ("dlsim-harness-" + name)) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    const Experiment e = experiment_from_yaml(
        YAML::Load("{model: cifar-resnet20, batch: 4, hw: h100-sxm, pool: cnmem, swap: none, concurrency: serial}"),
        "test.yaml");
    PreparedExperiment prep = prepare_experiment(e);
    VirtualDeviceMemory dev(prep.hw.spec.memory_bytes, prep.hw.spec.total_memory_bytes);
    auto pool = make_pool(e, dev);
    SimContext ctx{prep.graph, prep.hw.spec, *prep.hw.kernels, *prep.hw.link, *pool, dev};
    SimOptions so;
    so.iterations = 3;
    RunResult r = simulate(prep.program, ctx, so);
    number_as_measured(r.trace, 1);
    plan.hw = prep.hw.spec.name;
    plan.capacity_bytes = prep.hw.spec.memory_bytes;
    plan.total_global_mem_bytes = prep.hw.spec.total_memory_bytes;
    plan.pool = e.pool.name;
    plan.pool_params = e.pool.params;
    plan.warmup = 1;
    plan.iterations = 2;
    plan.graph = std::move(prep.graph);
    plan.program = std::move(prep.program);
    write_program_file(plan, path("plan.json"));
    trace = r.trace;
    trace.program_hash = program_fingerprint(read_program_file(path("plan.json")));  // as dlsim-cuda reads it
    write_trace_file(trace, path("trace.cuda.json"));
    write_trace_file(trace, path("trace.sim.json"));
  }
  ~ValidateDir() { fs::remove_all(dir); }
  std::string path(const std::string& file) const { return (dir / file).string(); }
  void write_real(const Trace& t) const { write_trace_file(t, path("trace.cuda.json")); }
  // The first op record of a measured iteration.
  size_t first_measured_op() const {
    size_t i = 0;
    while (trace.ops[i].iteration < 0) ++i;
    return i;
  }
};

ConfigError compare_error(const ValidateDir& d, std::string* warnings = nullptr) {
  std::ostringstream out, err;
  try {
    run_compare(d.path("trace.sim.json"), d.path("trace.cuda.json"), d.path("plan.json"), out, err);
  } catch (const ConfigError& e) {
    if (warnings) *warnings = err.str();
    return e;
  }
  FAIL("dlsim compare accepted the traces:\n" << out.str());
  return ConfigError("", 0, "", "");
}

}  // namespace

TEST_CASE("compare: traces of the plan compare, and a trace written before program_hash is checked by its ops") {
  const ValidateDir d("compare-ok");
  std::ostringstream out, err;
  CHECK(run_compare(d.path("trace.sim.json"), d.path("trace.cuda.json"), d.path("plan.json"), out, err) == 0);
  CHECK_THAT(out.str(), Catch::Contains("per-op MAPE:        0.0 % over"));
  CHECK(err.str().empty());
  Trace old = d.trace;
  old.program_hash.clear();
  d.write_real(old);
  std::ostringstream out2, err2;
  CHECK(run_compare(d.path("trace.sim.json"), d.path("trace.cuda.json"), d.path("plan.json"), out2, err2) == 0);
  CHECK_THAT(err2.str(), Catch::Contains("has no program_hash"));
}

TEST_CASE("compare: a measured trace with no ops, a zero-length op or iteration, or a negative one is bad input") {
  const ValidateDir d("compare-bad");
  const size_t k = d.first_measured_op();
  {
    Trace t = d.trace;  // nothing measured, and no out-of-memory to explain it
    t.ops.clear();
    t.iterations.clear();
    d.write_real(t);
    const ConfigError e = compare_error(d);
    CHECK(e.file() == d.path("trace.cuda.json"));
    CHECK(e.key() == "ops");
  }
  {
    Trace t = d.trace;
    t.ops[k].end = t.ops[k].start;
    d.write_real(t);
    const ConfigError e = compare_error(d);
    CHECK(e.key() == "ops[" + std::to_string(k) + "].end");
    CHECK_THAT(e.message(), Catch::Contains("takes no time"));
  }
  {
    Trace t = d.trace;
    t.ops[k].end = t.ops[k].start - 5;
    d.write_real(t);
    CHECK_THAT(compare_error(d).message(), Catch::Contains("ends before it starts"));
  }
  {
    Trace t = d.trace;
    t.iterations[1].end = t.iterations[0].end;  // the second iteration would take no time
    d.write_real(t);
    CHECK(compare_error(d).key() == "iterations[1].end");
  }
}

TEST_CASE("compare: a trace of another plan is refused, by its program_hash or, without one, by its ops") {
  const ValidateDir d("compare-other");
  {
    Trace t = d.trace;
    t.program_hash = "0123456789abcdef";
    d.write_real(t);
    const ConfigError e = compare_error(d);
    CHECK(e.key() == "program_hash");
    CHECK_THAT(e.message(), Catch::Contains("another plan"));
  }
  {
    Trace t = d.trace;  // an older trace of a plan with one op fewer per iteration
    t.program_hash.clear();
    t.ops.erase(t.ops.begin() + static_cast<std::ptrdiff_t>(d.first_measured_op()));
    d.write_real(t);
    std::string warnings;
    const ConfigError e = compare_error(d, &warnings);
    CHECK(e.key() == "ops");
    CHECK_THAT(e.message(), Catch::Contains("iteration 0 ran"));
    CHECK_THAT(warnings, Catch::Contains("no program_hash"));
  }
  {
    Trace t = d.trace;
    t.program_hash.clear();
    t.ops.back().op = static_cast<OpId>(d.plan.graph.ops().size());
    d.write_real(t);
    CHECK_THAT(compare_error(d).message(), Catch::Contains("is not an op of"));
  }
}

TEST_CASE("calibrate: what it writes loads as a hardware file, and durations of 0 or less are refused") {
  const ValidateDir d("calibrate");
  const std::string out_path = d.path("calibrated.yaml");
  std::ostringstream log;
  REQUIRE(run_calibrate({d.dir.string()}, resolve_hw_path("h100-sxm-harness"), out_path, log) == 0);
  const Hardware hw = load_hardware(out_path);  // the round trip: dlsim reads what calibrate wrote
  CHECK_FALSE(hw.spec.name.empty());
  fs::remove(out_path);

  Trace t = d.trace;
  const size_t k = d.first_measured_op();
  t.ops[k].end = t.ops[k].start - 1000;  // a negative duration
  d.write_real(t);
  try {
    run_calibrate({d.dir.string()}, resolve_hw_path("h100-sxm-harness"), out_path, log);
    FAIL("calibrate accepted a negative duration");
  } catch (const ConfigError& e) {
    CHECK(e.file() == d.path("trace.cuda.json"));
    CHECK(e.key() == "ops[" + std::to_string(k) + "].end");
  }
  CHECK_FALSE(fs::exists(out_path));
}

TEST_CASE("calibrate: a fit the hardware loader would refuse is an error naming the field, and nothing is written") {
  const ValidateDir d("calibrate-refused");
  // Copies so slow (1 byte more per second) that the fitted bandwidth rounds to 0.000 GB/s.
  MicrobenchResults m;
  m.device = "synthetic";
  m.launch_overhead_ns = 2500;
  for (CopyDir dir : {CopyDir::HostToDevice, CopyDir::DeviceToHost})
    for (bool pinned : {true, false})
      for (uint64_t b : {uint64_t{1}, uint64_t{2}, uint64_t{3}}) m.copies.push_back({dir, pinned, false, b, 1e9 * double(b)});
  for (uint64_t b : {uint64_t{1} << 20, uint64_t{1} << 30}) {
    m.allocs.push_back({false, b, 40000});
    m.allocs.push_back({true, b, 30000});
  }
  std::ofstream(d.path("micro.json")) << to_json(m).dump();
  const std::string out_path = d.path("calibrated.yaml");
  std::ostringstream log;
  try {
    run_calibrate({d.dir.string()}, resolve_hw_path("h100-sxm-harness"), out_path, log);
    FAIL("calibrate wrote a hardware file dlsim refuses");
  } catch (const ConfigError& e) {
    CHECK(e.file() == out_path);
    CHECK_THAT(e.key(), Catch::Contains("pcie"));
    CHECK_THAT(e.message(), Catch::Contains("would not load"));
  }
  CHECK_FALSE(fs::exists(out_path));
}
