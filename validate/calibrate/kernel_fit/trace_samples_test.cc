#include "validate/calibrate/kernel_fit/trace_samples.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hw/fitted/conv_backend.h"
#include "hw/fitted/kernel_terms.h"
#include "hw/gpu_spec_file.h"
#include "validate/calibrate/kernel_fit/sample_graph.h"
#include "validate/calibrate/torch_profile/matched_profiles.h"

namespace dlsim {
namespace {

namespace fs = std::filesystem;
const std::string kTraceTestData = std::string(DLSIM_SOURCE_DIR) + "/validate/calibrate/torch_profile/testdata/";

// The MLP's CPU trace (no GPU here) with one kernel of `us` under each forward aten::linear: a synthetic GPU trace
// whose samples are known.
fs::path mlp_trace_with_kernels(double us) {
  std::ifstream in(kTraceTestData + "mlp-b8-cpu.trace.json", std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json t = nlohmann::json::parse(text.str());
  nlohmann::json added = nlohmann::json::array();
  int64_t correlation = 5000;
  for (const nlohmann::json& e : t["traceEvents"]) {
    if (e.value("cat", "") != "cpu_op" || e.value("name", "") != "aten::linear") continue;
    const double ts = e["ts"].get<double>();
    added.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"ts", ts + 1},
                     {"dur", 1}, {"tid", e["tid"]}, {"pid", e["pid"]}, {"args", {{"correlation", correlation}}}});
    added.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "synthetic_gemm"}, {"ts", ts + 3}, {"dur", us},
                     {"tid", 7}, {"pid", 0}, {"args", {{"correlation", correlation}, {"stream", 7}}}});
    ++correlation;
  }
  for (nlohmann::json& e : added) t["traceEvents"].push_back(e);
  const fs::path dir = fs::temp_directory_path() / "dlsim-trace-samples";
  fs::create_directories(dir);
  const fs::path p = dir / "mlp-kernels.trace.json";
  std::ofstream(p) << t.dump();
  return p;
}

TEST_CASE("trace samples: each matched op's kernels, device-timed, with the idle gap per kernel added") {
  const fs::path trace = mlp_trace_with_kernels(40.0);
  const MatchedProfiles m = load_matched_profiles({trace.string()}, {kTraceTestData + "mlp-b8.yaml"});
  const GpuSpec spec = load_gpu_spec(resolve_hw_path("h200-fitted"));
  const TraceSamples t = trace_fit_samples(m.profiles, spec, spec.fitted_kernels, 0.5);
  // 5 linear layers x 3 profiled steps; their backward nodes launched nothing in this trace.
  REQUIRE(t.samples.size() == 15);
  CHECK(t.units == 15);
  CHECK(t.units_sampled == 15);
  CHECK(t.kernel_us == Approx(15 * 40.0));
  for (const FitSample& s : t.samples) {
    CHECK(s.device_timed);
    CHECK(s.cls == "gemm.cuda_core");
    CHECK(s.us == Approx(40.5));
    CHECK(s.weight == Approx(1.0));  // equal times: each its class's mean
    CHECK(s.model == m.profiles.front().graph->name);
    CHECK_THAT(s.shape_key, Catch::StartsWith("gemm.cuda_core "));
  }
}

TEST_CASE("trace samples: an op of no fitted family is not sampled, and the reason is counted") {
  const fs::path trace = mlp_trace_with_kernels(40.0);
  const MatchedProfiles m = load_matched_profiles({trace.string()}, {kTraceTestData + "mlp-b8.yaml"});
  const GpuSpec spec = load_gpu_spec(resolve_hw_path("h200-fitted"));
  FittedKernels none = spec.fitted_kernels;
  none.classes.erase("gemm.cuda_core");
  const TraceSamples t = trace_fit_samples(m.profiles, spec, none, 0.0);
  CHECK(t.samples.empty());
  CHECK(t.units == 15);
  REQUIRE(t.skipped.size() == 1);
  CHECK_THAT(t.skipped[0], Catch::Contains("15 units (MatMul 15): no class of the sweep's fit"));
}

TEST_CASE("trace samples: an fp32 NCHW grouped convolution's transposes come off its unit's time") {
  // ResNeXt-50's 3x3 layer of 32 groups, forward: the trace's unit is cuDNN's kernel and its three transposes.
  SweepRecord r;
  r.op = SweepOp::ConvFwd;
  r.dtype = "float32";
  r.layout = "nchw";
  r.conv.n = 32, r.conv.c = r.conv.k = 128, r.conv.h = r.conv.w = 56, r.conv.r = r.conv.s = 3;
  r.conv.pad_h = r.conv.pad_w = 1, r.conv.groups = 32;
  const Graph g = sample_graph(r);
  const GpuSpec spec = load_gpu_spec(resolve_hw_path("h200-fitted"));
  double side_us = 0;  // the transposes as the sweep's fit prices them on the device
  for (const KernelShape& t : conv_layout_transposes(KernelFamily::ConvFwd, r.conv, MathPath::Tf32, 4)) {
    const FittedKernelClass* c = find_class(spec.fitted_kernels, t);
    REQUIRE(c != nullptr);
    side_us += device_time_us(spec.fitted_kernels, *c, kernel_terms(t, spec, spec.fitted_kernels), 0.0);
  }
  REQUIRE(side_us > 0);
  ProfileHostOp host;
  host.kernels = 4;
  host.kernel_us = 160;  // the 2026-11-28 trace: 74 µs of kernel, 60 of transposes, in about this sum
  MatchedProfile p;
  p.graph = &g;
  StepMatch step;
  MatchedForwardOp f;
  f.host = &host;
  f.graph_op = g.ops().back().id;
  step.forward.push_back(f);
  p.matches.push_back(step);
  const TraceSamples t = trace_fit_samples({p}, spec, spec.fitted_kernels, 0.5);
  REQUIRE(t.samples.size() == 1);
  CHECK(t.samples[0].cls == "conv_fwd.tf32.grouped");
  CHECK(t.samples[0].us == Approx(160 + 4 * 0.5 - side_us));
  CHECK(t.sampled_us == Approx(160));
  // A unit the transposes alone would fill is skipped, and said so.
  host.kernel_us = side_us / 2;
  const TraceSamples none = trace_fit_samples({p}, spec, spec.fitted_kernels, 0.0);
  CHECK(none.samples.empty());
  REQUIRE(none.skipped.size() == 1);
  CHECK_THAT(none.skipped[0], Catch::Contains("1 units (Conv2d 1): its layout transposes"));
}

}  // namespace
}  // namespace dlsim
