// The optimizer's launches as fit samples of the multi_tensor class (multi_tensor_samples.h), and the fit that
// recovers the class's three coefficients from them (kernel_fit.h).
#include "validate/calibrate/kernel_fit/multi_tensor_samples.h"

#include <catch2/catch.hpp>

#include "hw/fitted/kernel_terms.h"
#include "hw/fitted/multi_tensor.h"
#include "hw/testing/fixtures.h"
#include "validate/calibrate/kernel_fit/kernel_fit.h"
#include "workloads/multi_tensor_apply.h"
#include "workloads/training.h"
#include "workloads/zoo.h"

namespace dlsim {
namespace {

// A trace step whose optimizer span holds `ops` (name, each kernel's µs), over `g`.
struct FakeTrace {
  ProfilerTrace trace;
  MatchedProfile profile;
  FakeTrace(const Graph& g, const std::vector<std::pair<std::string, std::vector<double>>>& ops,
            const std::string& span = "Optimizer.step#SGD.step") {
    ProfileStep step;
    ProfileEvent opt;
    opt.kind = ProfileEventKind::Annotation;
    opt.name = span;
    trace.events.push_back(opt);
    for (const auto& [name, kernels] : ops) {
      ProfileEvent e;
      e.name = name;
      e.index = trace.events.size();
      trace.events.push_back(e);
      ProfileHostOp h;
      h.event = e.index;
      h.kernels = static_cast<int64_t>(kernels.size());
      for (double us : kernels) h.kernel_us += us;
      h.kernel_each_us = kernels;
      step.optimizer_ops.push_back(h);
    }
    step.optimizer = &trace.events.front();  // not moved after: the events are all in
    profile.trace = &trace;
    profile.graph = &g;
    profile.steps.push_back(step);
  }
};

std::vector<int64_t> update_numels(const Graph& g) {
  std::vector<int64_t> v;
  for (const Op& op : g.ops())
    if (op.kind == OpKind::SgdMomentumUpdate) v.push_back(numel(g.tensor(op.inputs.front()).shape));
  return v;
}

Graph resnet50() {
  ModelOptions mo;
  mo.batch = 2;
  return build_training_graph("resnet50", mo);
}

}  // namespace

TEST_CASE("multi-tensor samples: each foreach SGD pass's launches, matched in order to its kernels") {
  const Graph g = resnet50();
  const std::vector<int64_t> numels = update_numels(g);
  // the measured step's four passes: decay (3 lists, 4 launches on ResNet-50), momentum, buffer and update (3)
  FakeTrace t(g, {{"aten::_foreach_add", {10, 11, 12, 13}},
                  {"aten::_foreach_mul_", {5, 6, 7}},
                  {"aten::_foreach_add_", {8, 9, 10}},
                  {"aten::_foreach_add_", {8, 9, 10}},
                  {"aten::_foreach_zero_", {1}}});  // no pass of SGD's step: not sampled, counted
  TraceSamples out;
  std::map<std::string, std::map<std::string, size_t>> skipped;
  append_multi_tensor_samples(t.profile, 0.5, out, skipped);
  REQUIRE(out.samples.size() == 13);
  CHECK(out.units == 5);
  CHECK(out.units_sampled == 4);
  CHECK(skipped.size() == 1);
  CHECK(skipped.begin()->second.at("aten::_foreach_zero_") == 1);
  const auto decay = multi_tensor_pass_shapes(numels, 3, DType::F32, 12);
  REQUIRE(decay.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(out.samples[i].cls == "multi_tensor.f32");
    CHECK(out.samples[i].device_timed);
    CHECK(out.samples[i].us == Approx(10.5 + static_cast<double>(i)));
    CHECK(out.samples[i].shape.bytes == decay[i].bytes);
    CHECK(out.samples[i].shape.chunk_bytes == decay[i].chunk_bytes);
  }
  const auto momentum = multi_tensor_pass_shapes(numels, 1, DType::F32, 8);
  CHECK(out.samples[4].shape.bytes == momentum[0].bytes);
  CHECK(out.samples[4].us == Approx(5.5));
}

TEST_CASE("multi-tensor samples: a pass of other kernel counts, or a graph of another optimizer, is not sampled") {
  const Graph g = resnet50();
  FakeTrace t(g, {{"aten::_foreach_mul_", {5, 6}}});  // the rule has three launches
  TraceSamples out;
  std::map<std::string, std::map<std::string, size_t>> skipped;
  append_multi_tensor_samples(t.profile, 0, out, skipped);
  CHECK(out.samples.empty());
  REQUIRE(skipped.size() == 1);
  CHECK_THAT(skipped.begin()->first, Catch::Contains("not the rule's launches"));
  ModelOptions mo;
  mo.batch = 2;
  mo.training.optimizer = Optimizer::Adam;
  const Graph adam = build_training_graph("resnet50", mo);
  FakeTrace a(adam, {{"aten::_foreach_mul_", {5, 6, 7}}});
  skipped.clear();
  append_multi_tensor_samples(a.profile, 0, out, skipped);
  CHECK(out.samples.empty());
  CHECK_THAT(skipped.begin()->first, Catch::Contains("not a pass of a foreach SGD step"));
  // another optimizer's step over the SGD graph (its passes' lists are not SGD's): not sampled
  FakeTrace other(g, {{"aten::_foreach_mul_", {5, 6, 7}}}, "Optimizer.step#Adam.step");
  skipped.clear();
  append_multi_tensor_samples(other.profile, 0, out, skipped);
  CHECK(out.samples.empty());
  CHECK(skipped.size() == 1);
}

TEST_CASE("the multi_tensor class's fit recovers fixed_us, byte_scale and chunk_scale from launches") {
  const GpuSpec spec = testing::round_spec();
  const FittedKernelClass truth = [] {
    FittedKernelClass c{4.5, 0, 0, 0.9, 0};
    c.chunk_scale = 0.4;
    return c;
  }();
  std::vector<FitSample> samples;
  for (const char* model : {"resnet50", "mobilenet_v2", "vgg16"}) {
    ModelOptions mo;
    mo.batch = 2;
    const std::vector<int64_t> numels = update_numels(build_training_graph(model, mo));
    for (int lists = 1; lists <= 3; ++lists)
      for (const KernelShape& s : multi_tensor_pass_shapes(numels, lists, DType::F32, 4 * (lists + 1))) {
        FitSample f;
        f.shape = s;
        f.cls = "multi_tensor.f32";
        f.us = class_time_us(truth, kernel_terms(s, spec, FittedKernels{}));
        f.device_timed = true;
        samples.push_back(f);
      }
  }
  REQUIRE(samples.size() >= kMinSamplesPerClass);
  std::vector<const FitSample*> ptrs;
  for (const FitSample& s : samples) ptrs.push_back(&s);
  const FittedKernelClass c = fit_kernel_class(ptrs, spec, FittedKernels{}, nullptr);
  CHECK(c.fixed_us == Approx(truth.fixed_us).epsilon(1e-3));
  CHECK(c.byte_scale == Approx(truth.byte_scale).epsilon(1e-3));
  CHECK(c.chunk_scale == Approx(truth.chunk_scale).epsilon(1e-3));
  CHECK(c.flop_scale == 0);
  CHECK(c.channel_scale == 0);
}

}  // namespace dlsim
