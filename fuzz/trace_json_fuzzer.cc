// Fuzz target: a trace JSON file (program/trace.h) as `dlsim compare` reads it, then compared (validate/calibrate/compare.h)
// against itself and against a trace renumbered as dlsim-cuda numbers its own, over a fixed graph
// (cifar-alexnet, batch 2: the graph the committed seed traces were simulated on), with both reports printed.
// The op, tensor and iteration numbers in the input are arbitrary: the comparison must cope with any of them.
#include <sstream>

#include "fuzz/fuzz_input.h"
#include "program/trace_file.h"
#include "validate/calibrate/compare.h"
#include "workloads/zoo.h"

namespace {
const dlsim::Graph& fixed_graph() {
  static const dlsim::Graph g = [] {
    dlsim::ModelOptions opts;
    opts.batch = 2;
    return dlsim::build_training_graph("cifar-alexnet", opts);
  }();
  return g;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const dlsim::Graph& g = fixed_graph();
  return dlsim::fuzz::run_loader([&] {
    const dlsim::Trace real = dlsim::trace_from_text(dlsim::fuzz::as_text(data, size), "fuzz-trace.json");
    dlsim::Trace sim = real;
    dlsim::number_as_measured(sim, 1);
    std::ostringstream out;
    for (const dlsim::Comparison& c : {dlsim::compare_traces(real, real, g), dlsim::compare_traces(sim, real, g)}) {
      dlsim::print_comparison(c, out, 0);
      out << dlsim::comparison_to_json(c).dump();
    }
  });
}
