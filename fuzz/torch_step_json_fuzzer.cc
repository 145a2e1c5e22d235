// Fuzz target: a recorded PyTorch step (workloads/torch_step.h), read and turned into a training graph
// (workloads/torch_step_graph.h) as `model: x.torchstep.json` in an experiment loads it. At most kMaxOps ops, so
// that one input cannot spend seconds; scripts/fuzz.sh also caps the input length (-max_len) for this target.
#include "fuzz/fuzz_input.h"
#include "workloads/torch_step_graph.h"

namespace {
constexpr int64_t kMaxOps = 2000;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dlsim::fuzz::run_loader([&] {
    dlsim::torch_step_graph(dlsim::parse_torch_step(dlsim::fuzz::as_text(data, size), "fuzz.torchstep.json", kMaxOps));
  });
}
