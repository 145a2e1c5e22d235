#include "validate/calibrate/torch_profile/profiler_trace.h"

#include <catch2/catch.hpp>

#include "common/config_error.h"

namespace dlsim {
namespace {

const std::string kProfileTestData = std::string(DLSIM_SOURCE_DIR) + "/validate/calibrate/torch_profile/testdata/";

// A minimal valid trace with one more event `extra` (a JSON object's text) after a cpu_op with shapes.
std::string trace_with(const std::string& extra) {
  return R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "ts": 10, "dur": 5, "tid": 7, "pid": 7,
     "args": {"Input Dims": [[2, 3]], "Sequence number": 4, "Fwd thread id": 0, "External id": 1}})" +
         (extra.empty() ? "" : ",\n    " + extra) + "]}";
}

std::string error_of(const std::string& text) {
  try {
    profiler_trace_from_text(text, "bad.json");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "bad.json");
    return e.key() + ": " + e.message();
  }
  return "no error";
}

TEST_CASE("profiler trace: a CPU trace recorded by record_profile.py reads with its shapes and step time") {
  const ProfilerTrace t = load_profiler_trace(kProfileTestData + "mlp-b8-cpu.trace.json");
  size_t cpu_ops = 0, steps = 0, with_shapes = 0;
  for (const ProfileEvent& e : t.events) {
    cpu_ops += e.kind == ProfileEventKind::CpuOp;
    steps += e.kind == ProfileEventKind::Annotation && e.name.rfind("ProfilerStep#", 0) == 0;
    for (const ProfileInput& in : e.inputs) with_shapes += in.is_tensor() ? 1 : 0;
    CHECK(e.dur_us >= 0);
  }
  CHECK(cpu_ops > 100);
  CHECK(steps == 3);
  CHECK(with_shapes > 100);
  CHECK(t.unprofiled_step_us > 0);
  CHECK_THAT(t.recorded, Catch::Contains("batch 8"));
}

TEST_CASE("profiler trace: the fields of the kept events are read") {
  const ProfilerTrace t = profiler_trace_from_text(
      trace_with(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 12, "dur": 3, "tid": "stream 7", "pid": 0,
                    "args": {"correlation": 99, "External id": 1}},
                    {"ph": "X", "cat": "cpu_op", "name": "aten::cat", "ts": 20, "dur": 1, "tid": 7,
                     "args": {"Input Dims": [[[2, 3], [2, 4]], []]}},
                    {"ph": "X", "cat": "python_function", "name": "ignored", "ts": 0, "dur": 1, "tid": 7},
                    {"ph": "f", "cat": "fwdbwd", "name": "flow", "ts": 0, "id": 1})"),
      "ok.json");
  REQUIRE(t.events.size() == 3);
  const ProfileEvent& relu = t.events[0];
  CHECK(relu.kind == ProfileEventKind::CpuOp);
  CHECK(relu.tid == "7");
  CHECK(relu.inputs.at(0).shape == std::vector<int64_t>{2, 3});
  CHECK(*relu.sequence == 4);
  CHECK(*relu.external_id == 1);
  const ProfileEvent& k = t.events[1];
  CHECK(k.kind == ProfileEventKind::Kernel);
  CHECK(k.tid == "stream 7");
  CHECK(*k.correlation == 99);
  CHECK(k.index == 1);
  CHECK(t.events[2].inputs.at(0).list.size() == 2);
  CHECK_FALSE(t.events[2].inputs.at(1).is_tensor());
  CHECK(t.unprofiled_step_us == 0);
}

TEST_CASE("profiler trace: what is not a trace is refused naming the file and the field") {
  CHECK_THAT(error_of("not json"), Catch::Contains("not a profiler trace: not JSON"));
  // A number past a double's range (the fuzz target's find: "pid": 11e308) is refused, not thrown past the loader.
  CHECK_THAT(error_of(R"({"traceEvents": [{"ph": "X", "pid": 11e308}]})"),
             Catch::Contains("not a profiler trace: not JSON"));
  CHECK_THAT(error_of("\"a string\""), Catch::StartsWith("traceEvents: missing"));
  CHECK_THAT(error_of(R"({"records": []})"), Catch::StartsWith("traceEvents: missing"));
  CHECK_THAT(error_of("[1, 2]"), Catch::StartsWith("traceEvents[0]: must be an object"));  // the array form
  CHECK_THAT(error_of(R"({"traceEvents": {}})"), Catch::StartsWith("traceEvents: must be a list"));
  CHECK_THAT(error_of(R"({"traceEvents": []})"), Catch::Contains("holds no cpu_op events"));
  CHECK_THAT(error_of(trace_with("3")), Catch::StartsWith("traceEvents[1]: must be an object"));
}

TEST_CASE("profiler trace: a trace of PyTorch's legacy profiler (no Kineto, no categories) is refused saying so") {
  CHECK_THAT(error_of(R"([{"name": "aten::zeros", "ph": "X", "ts": 119, "dur": 31, "tid": 1,
                          "pid": "CPU functions", "args": {}}])"),
             Catch::Contains("a PyTorch built without Kineto"));
}

TEST_CASE("profiler trace: a trace without shapes is refused: record_shapes was off") {
  const std::string text = R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::relu", "ts": 1,
                              "dur": 1, "tid": 1, "args": {"External id": 3}}]})";
  CHECK_THAT(error_of(text), Catch::Contains("record_shapes=True"));
}

TEST_CASE("profiler trace: bad fields of an event name the event's index and the field") {
  CHECK_THAT(error_of(trace_with(R"({"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "tid": 1, "args": {}})")),
             Catch::StartsWith("traceEvents[1].dur: missing"));
  CHECK_THAT(error_of(trace_with(R"({"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": -2, "tid": 1,
                                      "args": {}})")),
             Catch::StartsWith("traceEvents[1].dur: must be in [0,"));
  CHECK_THAT(error_of(trace_with(R"({"ph": "X", "cat": "cpu_op", "name": 5, "ts": 1, "dur": 2, "tid": 1})")),
             Catch::StartsWith("traceEvents[1].name: must be a string"));
  CHECK_THAT(error_of(trace_with(R"({"ph": "X", "cat": "cpu_op", "name": "a", "ts": "1", "dur": 2, "tid": 1})")),
             Catch::StartsWith("traceEvents[1].ts: must be a number"));
  CHECK_THAT(error_of(trace_with(R"({"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 2, "tid": [1],
                                      "args": {}})")),
             Catch::StartsWith("traceEvents[1].tid: must be a thread id"));
  CHECK_THAT(error_of(trace_with(R"({"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 2, "tid": 1,
                                      "args": {"Input Dims": [[2, "x"]]}})")),
             Catch::StartsWith("traceEvents[1].args.Input Dims[0]: a dimension must be an integer"));
  CHECK_THAT(error_of(trace_with(R"({"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 2, "tid": 1,
                                      "args": {"Input Dims": [[-1]]}})")),
             Catch::StartsWith("traceEvents[1].args.Input Dims[0]: a dimension must be in [0, 2^48]"));
  CHECK_THAT(error_of(trace_with(R"({"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 2, "tid": 1,
                                      "args": {"Input Dims": 3}})")),
             Catch::StartsWith("traceEvents[1].args.Input Dims: must be a list"));
  CHECK_THAT(error_of(trace_with(R"({"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 2, "tid": 1,
                                      "args": {"Input Dims": [], "Sequence number": 1.5}})")),
             Catch::StartsWith("traceEvents[1].args.Sequence number: must be an integer"));
  CHECK_THAT(error_of(trace_with(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "tid": 1,
                                      "args": {}})")),
             Catch::StartsWith("traceEvents[1].args.correlation: missing"));
  CHECK_THAT(error_of(trace_with(R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1,
                                      "dur": 2, "tid": 1, "args": []})")),
             Catch::StartsWith("traceEvents[1].args: must be an object"));
  CHECK_THAT(error_of(trace_with(R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1,
                                      "dur": 2, "tid": 1, "args": {}})")),
             Catch::StartsWith("traceEvents[1].args.correlation: missing"));
  // A call that issues no GPU work links nothing: its correlation may be absent.
  CHECK_NOTHROW(profiler_trace_from_text(trace_with(R"({"ph": "X", "cat": "cuda_runtime", "name":
                "cudaGetDevice", "ts": 1, "dur": 2, "tid": 1, "args": {}})"), "ok.json"));
  CHECK_THAT(error_of(trace_with(R"({"ph": 1})")), Catch::StartsWith("traceEvents[1].ph: must be a string"));
}

TEST_CASE("profiler trace: record_profile.py's step time must be a positive time") {
  std::string text = trace_with("");
  text.insert(1, R"("dlsim": {"unprofiled_step_us": 0}, )");
  CHECK_THAT(error_of(text), Catch::StartsWith("dlsim.unprofiled_step_us: must be a time"));
}

TEST_CASE("profiler trace: an unreadable file is an error naming it") {
  CHECK_THROWS_AS(load_profiler_trace(kProfileTestData + "no-such-trace.json"), ConfigError);
}

}  // namespace
}  // namespace dlsim
