// Fuzz target: an NCCL measurement (validate/calibrate/interconnect_fit/nccl_measurements.h) as `dlsim
// fit-interconnect` reads it, then fitted from the H100 file's interconnect: whatever the loader accepts, the fit
// must take without throwing anything but a ConfigError, and give finite parameters within their bounds.
#include <cmath>
#include <stdexcept>

#include "fuzz/fuzz_input.h"
#include "validate/calibrate/interconnect_fit/interconnect_fit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dlsim::fuzz::run_loader([&] {
    const dlsim::NcclMeasurements m =
        dlsim::nccl_measurements_from_text(dlsim::fuzz::as_text(data, size), "fuzz-nccl.json");
    dlsim::Interconnect start;
    start.base_latency_s = 8.4e-6;
    start.intra = {450e9, 3.4e-6, 0.82};
    start.inter = dlsim::LinkLevel{50e9, 14e-6, 0.94};
    const dlsim::InterconnectFit f = dlsim::fit_interconnect(m.points, m.gpus_per_node, start, false);
    for (const dlsim::FittedLinkParam& p : f.params) {
      const bool latency = p.param == dlsim::LinkParam::BaseLatency || p.param == dlsim::LinkParam::IntraLatency ||
                           p.param == dlsim::LinkParam::InterLatency;
      if (!std::isfinite(p.value) || (latency ? p.value < 0 : !(p.value > 0 && p.value <= 1)))
        throw std::logic_error("a fitted parameter out of its range: " + dlsim::link_param_key(p.param));
    }
  });
}
