#include "validate/calibrate/torch_profile/profile_match.h"

#include <catch2/catch.hpp>

#include "experiment/experiment.h"
#include "experiment/experiment_graph.h"
#include "validate/calibrate/torch_profile/matched_profiles.h"
#include "workloads/zoo.h"

namespace dlsim {
namespace {

const std::string kMatchTestData = std::string(DLSIM_SOURCE_DIR) + "/validate/calibrate/torch_profile/testdata/";

struct MatchFixture {
  ProfilerTrace trace;
  Graph graph;
  std::vector<ProfileStep> steps;
  MatchFixture(const std::string& trace_file, const std::string& experiment)
      : trace(load_profiler_trace(kMatchTestData + trace_file)),
        graph(build_experiment_graph(load_experiment(kMatchTestData + experiment))),
        steps(profile_steps(trace)) {}
};

size_t count_named(const ProfilerTrace& t, const std::vector<ProfileHostOp>& ops, const std::string& name) {
  size_t n = 0;
  for (const ProfileHostOp& h : ops) n += t.events[h.event].name == name;
  return n;
}

TEST_CASE("profile match: ResNet-18's CPU step matches the zoo graph op by op") {
  const MatchFixture f("resnet18-b2-s32-cpu.trace.json", "resnet18-b2-s32.yaml");
  REQUIRE(f.steps.size() == 1);
  const ProfileStep& s = f.steps[0];
  CHECK(s.name == "ProfilerStep#2");
  CHECK(s.seed != nullptr);
  CHECK(s.optimizer != nullptr);
  CHECK(count_named(f.trace, s.forward, "aten::conv2d") == 20);
  CHECK(count_named(f.trace, s.forward, "aten::batch_norm") == 20);
  const StepMatch m = match_profile_step(f.trace, s, f.graph);
  // Every convolution is matched to a convolution of the graph whose input has the traced shape, in order.
  size_t convs = 0, counters = 0;
  OpId last_conv = -1;
  for (const MatchedForwardOp& op : m.forward) {
    const ProfileEvent& e = f.trace.events[op.host->event];
    const Op& g = f.graph.op(op.graph_op);
    if (e.name == "aten::conv2d") {
      ++convs;
      CHECK(g.kind == OpKind::Conv2d);
      CHECK(f.graph.tensor(g.inputs.at(0)).shape == e.inputs.at(0).shape);
      CHECK(g.id > last_conv);
      last_conv = g.id;
      CHECK(op.nodes.size() == 1);  // its ConvolutionBackward0
    }
    if (op.bn_counter) {
      ++counters;
      CHECK(g.kind == OpKind::BatchNorm);
    }
  }
  CHECK(convs == 20);
  CHECK(counters == 20);   // each BatchNorm2d's num_batches_tracked.add_
  CHECK(m.accumulate_grad.size() == 62);  // one per parameter tensor
  // The zoo graph has no op for the flatten (a view: the linear layer reads the pooled tensor), so it and its
  // ViewBackward0 are set apart as moving no data, not dropped; every op of the graph's forward has its trace op.
  CHECK(m.unmatched.empty());
  REQUIRE(m.without_op.size() == 2);
  CHECK(f.trace.events[m.without_op[0]->event].name == "aten::flatten");
  CHECK(autograd_node_name(f.trace.events[m.without_op[1]->event]) == "ViewBackward0");
  CHECK(m.graph_unmatched.empty());
}

TEST_CASE("profile match: the MLP's CPU steps match a recorded step's graph") {
  const MatchFixture f("mlp-b8-cpu.trace.json", "mlp-b8.yaml");
  REQUIRE(f.steps.size() == 3);
  for (const ProfileStep& s : f.steps) {
    const StepMatch m = match_profile_step(f.trace, s, f.graph);
    size_t linears = 0;
    for (const MatchedForwardOp& op : m.forward)
      if (f.trace.events[op.host->event].name == "aten::linear") {
        ++linears;
        CHECK(f.graph.op(op.graph_op).kind == OpKind::MatMul);
        CHECK_FALSE(op.nodes.empty());  // AddmmBackward0 (and TBackward0)
      }
    CHECK(linears == 5);
    CHECK(m.accumulate_grad.size() == 10);
    CHECK(m.unmatched.empty());
  }
}

std::vector<std::string> names_of(const ProfilerTrace& t, const std::vector<const ProfileHostOp*>& ops) {
  std::vector<std::string> v;
  for (const ProfileHostOp* h : ops) {
    const ProfileEvent& e = t.events[h->event];
    v.push_back(is_autograd_node(e) ? autograd_node_name(e) : e.name);
  }
  return v;
}

MatchedProfile matched_profile(const MatchFixture& f) {
  MatchedProfile p;
  p.trace = &f.trace;
  p.graph = &f.graph;
  p.steps = f.steps;
  for (const ProfileStep& s : f.steps) p.matches.push_back(match_profile_step(f.trace, s, f.graph));
  return p;
}

TEST_CASE("profile match: ConvNeXt's and MobileNet-V3's ops the trace names otherwise than the recording") {
  // profile_models.py:convnext_mobilenet_v3_ops: a ConvNeXt block (the permutes around LayerNorm and the Linears,
  // stochastic depth's empty, bernoulli_ and div_) and MobileNet-V3's hardswish_, hardsigmoid and in-place
  // dropout_, profiled on the CPU and recorded by import-torch.
  const MatchFixture f("convnext-mbv3-ops-b2-cpu.trace.json", "convnext-mbv3-ops-b2.yaml");
  REQUIRE(f.steps.size() == 1);
  const StepMatch m = match_profile_step(f.trace, f.steps[0], f.graph);
  CHECK(m.unmatched.empty());
  // The ops dlsim prices by their traffic match the recording's op of the same aten name; the in-place dropout_,
  // one op in the trace, the first of the parts the recording sees (bernoulli_).
  std::map<std::string, std::vector<std::string>> recorded_as;
  for (const MatchedForwardOp& op : m.forward) {
    const std::string& traced = f.trace.events[op.host->event].name;
    const Op& g = f.graph.op(op.graph_op);
    if (g.kind == OpKind::Other) recorded_as[traced].push_back(g.name.substr(g.name.rfind('/') + 1));
  }
  CHECK(recorded_as["aten::hardswish_"].size() == 2);
  for (const std::string& n : recorded_as["aten::hardswish_"]) CHECK_THAT(n, Catch::StartsWith("hardswish_#"));
  REQUIRE(recorded_as["aten::hardsigmoid"].size() == 1);
  CHECK_THAT(recorded_as["aten::hardsigmoid"][0], Catch::StartsWith("hardsigmoid#"));
  REQUIRE(recorded_as["aten::bernoulli_"].size() == 1);
  REQUIRE(recorded_as["aten::div_"].size() == 1);
  REQUIRE(recorded_as["aten::dropout_"].size() == 1);
  CHECK_THAT(recorded_as["aten::dropout_"][0], Catch::StartsWith("bernoulli_#"));
  // The views and the allocation launch no kernel and have no op in the recorded graph: set apart, with the
  // permutes' and the flatten's nodes.
  CHECK(names_of(f.trace, m.without_op) ==
        std::vector<std::string>{"aten::permute", "aten::permute", "aten::empty", "aten::flatten", "ViewBackward0",
                                 "PermuteBackward0", "PermuteBackward0"});
  // GELU reads the first Linear's output, which the recording holds as the addmm's [128, 64] and the trace shows
  // as the [2, 8, 8, 64] view aten::linear returns: one tensor.
  bool gelu = false;
  for (const MatchedForwardOp& op : m.forward) gelu |= f.graph.op(op.graph_op).kind == OpKind::Gelu;
  CHECK(gelu);
  // Every forward op of the graph has its trace op but the parts of a composite the trace shows whole:
  // hardswish_'s clone of its input (autograd's copy of what the in-place op overwrites), dropout_'s div_ and mul_,
  // cross_entropy's nll_loss_forward (its _log_softmax is the match).
  std::vector<std::string> left;
  for (OpId id : m.graph_unmatched) {
    const std::string& n = f.graph.op(id).name;
    left.push_back(n.substr(n.rfind('/') + 1, n.rfind('#') - n.rfind('/') - 1));
  }
  CHECK(left == std::vector<std::string>{"clone", "clone", "div_", "mul_", "nll_loss_forward"});
  profile_check_matched(matched_profile(f));  // taken whole
}

TEST_CASE("profile match: the aliases and views taken do not make another model's trace pass") {
  // The ConvNeXt/MobileNet-V3 trace against the MLP's graph, and the MLP's against the ConvNeXt/MobileNet-V3
  // graph: most of each trace's ops match nothing, and the trace is refused.
  const MatchFixture a("convnext-mbv3-ops-b2-cpu.trace.json", "mlp-b8.yaml");
  CHECK_THROWS_WITH(profile_check_matched(matched_profile(a)), Catch::Contains("match no op of"));
  const MatchFixture b("mlp-b8-cpu.trace.json", "convnext-mbv3-ops-b2.yaml");
  CHECK_THROWS_WITH(profile_check_matched(matched_profile(b)), Catch::Contains("match no op of"));
  // A view that launched a kernel (a reshape that copied) is no view: listed as unmatched.
  const ProfilerTrace t = profiler_trace_from_text(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::reshape", "ts": 10, "dur": 5, "tid": 3, "args": {"Input Dims": [[2, 4]],
     "correlation": 7}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 11, "dur": 2, "tid": 3, "args": {"correlation": 7}},
    {"ph": "X", "cat": "kernel", "name": "copy_kernel", "ts": 20, "dur": 3, "tid": 7, "args": {"correlation": 7}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::permute", "ts": 30, "dur": 5, "tid": 3, "args": {"Input Dims": [[2, 4]]}}
  ]})", "views.json");
  const auto steps = profile_steps(t);
  REQUIRE(steps.size() == 1);
  REQUIRE(steps[0].forward.size() == 2);
  const StepMatch m = match_profile_step(t, steps[0], a.graph);
  REQUIRE(m.unmatched.size() == 1);
  CHECK_THAT(m.unmatched[0].what, Catch::Contains("aten::reshape"));
  REQUIRE(m.without_op.size() == 1);
  CHECK(t.events[m.without_op[0]->event].name == "aten::permute");
}

TEST_CASE("profile match: a trace of another batch matches nothing, and every op is listed with its place") {
  const MatchFixture f("resnet18-b2-s32-cpu.trace.json", "resnet18-b4-s32.yaml");
  const StepMatch m = match_profile_step(f.trace, f.steps[0], f.graph);
  CHECK(m.forward.size() < 5);  // shape-free ops (a scalar add) may still pair up by kind
  REQUIRE(m.unmatched.size() > 100);
  CHECK_THAT(m.unmatched.front().what, Catch::StartsWith("traceEvents["));
  CHECK_THAT(m.unmatched.front().what, Catch::Contains("aten::conv2d [2, 3, 32, 32] at +"));
  CHECK_THAT(m.unmatched.front().what, Catch::Contains("in ProfilerStep#2: no forward op of that kind and shape"));
}

TEST_CASE("profile match: a GPU-shaped step, autograd's nodes on the engine's thread and kernels by correlation") {
  // Written by hand (no GPU trace exists here): fuzz/corpus/torch_profile_json/gpu-step.json.
  const ProfilerTrace t = load_profiler_trace(std::string(DLSIM_SOURCE_DIR) +
                                              "/fuzz/corpus/torch_profile_json/gpu-step.json");
  const auto steps = profile_steps(t);
  REQUIRE(steps.size() == 1);
  const ProfileStep& s = steps[0];
  REQUIRE(s.forward.size() == 3);  // conv2d, batch norm's counter, batch_norm; the seed taken out
  CHECK(s.seed != nullptr);
  CHECK(s.forward[0].kernels == 1);
  CHECK(s.forward[0].kernel_us == 12);
  REQUIRE(s.backward.size() == 2);  // on thread 2
  CHECK(s.backward[0].grad_sums == 1);
  CHECK(s.backward[0].grad_sum_us == 3);
  CHECK(s.optimizer_ops.size() == 1);
  CHECK(s.sync_wait_us == 20);
  ModelOptions o;
  o.batch = 2;
  const Graph g = build_training_graph("cifar-resnet20", o);
  const StepMatch m = match_profile_step(t, s, g);
  REQUIRE(m.forward.size() == 2);
  CHECK(g.op(m.forward[0].graph_op).kind == OpKind::Conv2d);
  CHECK(g.op(m.forward[1].graph_op).kind == OpKind::BatchNorm);
  CHECK(m.forward[1].bn_counter != nullptr);
  CHECK(m.forward[1].nodes.size() == 1);  // NativeBatchNormBackward0, by its sequence number
  CHECK(m.accumulate_grad.size() == 1);
  CHECK(m.unmatched.empty());
}

TEST_CASE("profile steps: a trace without ProfilerStep spans is one step, from its first host op to its last") {
  const ProfilerTrace t = profiler_trace_from_text(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "ts": 10, "dur": 5, "tid": 3, "args": {"Input Dims": [[2, 4]]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "ts": 20, "dur": 5, "tid": 3, "args": {"Input Dims": [[2, 4]]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::clone", "ts": 21, "dur": 2, "tid": 3, "args": {"Input Dims": [[2, 4]]}}
  ]})", "whole.json");
  const auto steps = profile_steps(t);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].name == "whole trace");
  CHECK(steps[0].start_us == 10);
  CHECK(steps[0].end_us == 25);
  CHECK(steps[0].main_thread == "3");
  CHECK(steps[0].forward.size() == 2);  // the clone is inside the second relu: not top-level
}

TEST_CASE("profile match: aten ops map to the kinds dlsim builds them as") {
  CHECK(profile_op_kinds("aten::conv2d") == std::vector<OpKind>{OpKind::Conv2d});
  CHECK(profile_op_kinds("aten::linear").front() == OpKind::Linear);
  CHECK(profile_op_kinds("aten::nonexistent_op").empty());
}

}  // namespace
}  // namespace dlsim
