// Fuzz target: a torch.profiler trace (validate/calibrate/torch_profile/profiler_trace.h) as `dlsim calibrate
// --torch-profile` reads it, cut into steps and matched against a fixed small training graph (CIFAR ResNet-20 at
// batch 2): every kept event's duration is non-negative, and every matched op is a forward op of that graph.
#include <stdexcept>

#include "fuzz/fuzz_input.h"
#include "validate/calibrate/torch_profile/profile_match.h"
#include "workloads/zoo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const dlsim::Graph graph = [] {
    dlsim::ModelOptions o;
    o.batch = 2;
    return dlsim::build_training_graph("cifar-resnet20", o);
  }();
  return dlsim::fuzz::run_loader([&] {
    const dlsim::ProfilerTrace t = dlsim::profiler_trace_from_text(dlsim::fuzz::as_text(data, size), "fuzz.json");
    for (const dlsim::ProfileEvent& e : t.events)
      if (!(e.dur_us >= 0)) throw std::logic_error("an accepted event with a negative duration");
    for (const dlsim::ProfileStep& s : dlsim::profile_steps(t)) {
      const dlsim::StepMatch m = dlsim::match_profile_step(t, s, graph);
      for (const dlsim::MatchedForwardOp& f : m.forward)
        if (graph.op(f.graph_op).phase != dlsim::Phase::Forward) throw std::logic_error("matched a non-forward op");
    }
  });
}
