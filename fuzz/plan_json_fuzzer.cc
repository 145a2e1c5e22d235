// Fuzz target: a plan file (validate/gpu/program_file.h) as `dlsim compare --plan` and dlsim-cuda read it, then
// written back: what was accepted must serialise and read back.
#include <stdexcept>

#include "fuzz/fuzz_input.h"
#include "validate/gpu/program_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dlsim::fuzz::run_loader([&] {
    const dlsim::ProgramFile plan = dlsim::program_file_from_text(dlsim::fuzz::as_text(data, size), "fuzz-plan.json");
    const std::string again = dlsim::program_file_to_json(plan).dump();
    try {
      dlsim::program_file_from_text(again, "fuzz-plan-again.json");
    } catch (const dlsim::ConfigError& e) {
      throw std::logic_error(std::string("an accepted plan does not read back: ") + e.what());
    }
  });
}
