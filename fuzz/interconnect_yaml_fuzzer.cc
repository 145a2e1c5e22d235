// Fuzz target: a YAML document holding the hardware file's `interconnect:` section (hw/interconnect_file.h), read
// on its own until GpuSpec holds one.
#include "common/yaml_reader.h"
#include "fuzz/fuzz_input.h"
#include "hw/interconnect_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dlsim::fuzz::run_loader([&] {
    const std::string file = "fuzz-interconnect.yaml";
    dlsim::interconnect_from_yaml(dlsim::parse_yaml_text(dlsim::fuzz::as_text(data, size), file), file);
  });
}
