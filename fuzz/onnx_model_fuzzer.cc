// Fuzz target: an ONNX model (workloads/onnx_import.h) through the importer and the training-graph synthesis
// (workloads/training.h), as `model: x.onnx` in an experiment builds it. A graph of more than kMaxNodes nodes is
// refused before the import (a ConfigError), so that one input cannot spend seconds; scripts/fuzz.sh also caps
// the input length (-max_len) for this target.
#include "fuzz/fuzz_input.h"
#include "workloads/onnx_import.h"
#include "workloads/training.h"

namespace {
constexpr int kMaxNodes = 300;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dlsim::fuzz::run_loader([&] {
    dlsim::ModelOptions opts;
    opts.batch = 2;
    const dlsim::Graph forward =
        dlsim::import_onnx_forward_from_bytes(dlsim::fuzz::as_text(data, size), "fuzz.onnx", opts, kMaxNodes);
    dlsim::make_training_graph(forward, opts.training);
  });
}
