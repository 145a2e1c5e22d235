// Fuzz target: a hardware YAML file (hw/hardware.h): the GPU spec, its kernel cost model and its PCIe link, as
// `hw: some.yaml` in an experiment loads them.
#include "common/yaml_reader.h"
#include "fuzz/fuzz_input.h"
#include "hw/hardware.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dlsim::fuzz::run_loader([&] {
    const std::string file = "fuzz-hw.yaml";
    dlsim::hardware_from_yaml(dlsim::parse_yaml_text(dlsim::fuzz::as_text(data, size), file), file);
  });
}
