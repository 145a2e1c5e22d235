// Fuzz target: an experiment YAML file (experiment/experiment.h), parsed from memory as `dlsim run` parses the file.
// Relative paths in the input (hw: configs/hw/x.yaml, model: x.onnx) resolve from the working folder, which
// scripts/fuzz.sh sets to the repository root so that seeds naming real files reach the code beyond the checks.
#include "experiment/experiment.h"
#include "common/yaml_reader.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dlsim::fuzz::run_loader([&] {
    const std::string file = "fuzz-experiment.yaml";
    dlsim::experiment_from_yaml(dlsim::parse_yaml_text(dlsim::fuzz::as_text(data, size), file), file);
  });
}
