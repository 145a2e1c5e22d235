// Fuzz target: a kernel sweep (validate/calibrate/kernel_fit/kernel_sweep.h) as `dlsim fit-kernels` reads it, then
// each record written back: what was accepted must serialise and read back, and give a kernel shape.
#include <stdexcept>

#include "fuzz/fuzz_input.h"
#include "validate/calibrate/kernel_fit/fit_samples.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dlsim::fuzz::run_loader([&] {
    const dlsim::KernelSweep sweep = dlsim::kernel_sweep_from_text(dlsim::fuzz::as_text(data, size), "fuzz-sweep.json");
    nlohmann::json again = {{"records", nlohmann::json::array()}};
    for (const dlsim::SweepRecord& r : sweep.records) again["records"].push_back(dlsim::sweep_record_to_json(r));
    try {
      dlsim::kernel_sweep_from_text(again.dump(), "fuzz-sweep-again.json");
    } catch (const dlsim::ConfigError& e) {
      throw std::logic_error(std::string("an accepted sweep does not read back: ") + e.what());
    }
    std::vector<std::string> notes;
    for (const dlsim::FitSample& s : dlsim::fit_samples(sweep, notes))
      if (!(s.us > 0)) throw std::logic_error("a fit sample without a positive time");
  });
}
