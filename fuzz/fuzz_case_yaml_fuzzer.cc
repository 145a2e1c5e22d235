// Fuzz target: a saved simulation-fuzzer case (experiment/simfuzz/simfuzz_case.h), as `dlsim simfuzz --replay`
// reads it. Read only: replaying a case runs the simulator, which the simulation fuzzer itself exercises.
#include "common/yaml_reader.h"
#include "experiment/simfuzz/simfuzz_case.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dlsim::fuzz::run_loader([&] {
    const std::string file = "fuzz-case.yaml";
    dlsim::fuzz_case_from_yaml(dlsim::parse_yaml_text(dlsim::fuzz::as_text(data, size), file), file);
  });
}
