// Fuzz target: a sweep YAML file (cli/sweep.h): the base experiment and every point the `vary` axes expand to.
#include "cli/sweep.h"
#include "common/yaml_reader.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dlsim::fuzz::run_loader([&] {
    const std::string file = "fuzz-sweep.yaml";
    dlsim::sweep_from_yaml(dlsim::parse_yaml_text(dlsim::fuzz::as_text(data, size), file), file);
  });
}
