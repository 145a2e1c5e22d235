#include "hw/host_cpu_file.h"
#include "common/strings.h"

#include <cmath>
#include <vector>
#include <sstream>
#include <string>

namespace dlsim {

namespace {

// A per-op or per-step host cost in µs. At most 1e6 µs (a second): the measured costs are tens of µs to a few ms,
// so a larger one is a typo, and a million ops at that bound still fit the simulated clock.
TimeNs host_cost_ns(const YamlMap& m, const std::string& key) {
  const double v = m.get_double(key);
  if (!(v >= 0 && v <= 1e6)) m.fail(key, "must be in [0, 1e6] us, got " + significant(v));
  return static_cast<TimeNs>(std::llround(v * 1000.0));
}

// forward_us / backward_us: one cost per op class, every class given (a class left out would price its ops at 0).
void read_host_per_class(const YamlMap& m, std::array<TimeNs, kHostOpClasses>& out) {
  std::vector<std::string> keys;
  for (size_t c = 0; c < kHostOpClasses; ++c) keys.push_back(to_string(static_cast<HostOpClass>(c)));
  m.check_keys(keys);
  for (size_t c = 0; c < kHostOpClasses; ++c) out[c] = host_cost_ns(m, keys[c]);
}

EagerHostSpec read_pytorch_eager(const YamlMap& m) {
  m.check_keys({"forward_us", "backward_us", "extra_kernel_us", "grad_accumulate_us", "param_grad_us",
                "backward_start_us", "optimizer_step_us", "optimizer_tensor_us"});
  EagerHostSpec s;
  read_host_per_class(m.get_map("forward_us"), s.forward_ns);
  read_host_per_class(m.get_map("backward_us"), s.backward_ns);
  s.extra_kernel_ns = host_cost_ns(m, "extra_kernel_us");
  s.grad_accumulate_ns = host_cost_ns(m, "grad_accumulate_us");
  s.param_grad_ns = host_cost_ns(m, "param_grad_us");
  s.backward_start_ns = host_cost_ns(m, "backward_start_us");
  s.optimizer_step_ns = host_cost_ns(m, "optimizer_step_us");
  s.optimizer_tensor_ns = host_cost_ns(m, "optimizer_tensor_us");
  return s;
}

}  // namespace

void read_host_cpu(const YamlMap& m, GpuSpec& g) {
  m.check_keys({"adam_gb_per_s", "pytorch_eager"});
  if (!m.has("adam_gb_per_s") && !m.has("pytorch_eager"))
    m.fail("", "needs adam_gb_per_s, pytorch_eager or both (an empty section says nothing; leave it out)");
  if (m.has("adam_gb_per_s")) {
    const double v = m.get_double("adam_gb_per_s");
    // 1 MB/s .. 1 PB/s: a rate outside is a typo, and a step at 1 MB/s still fits the clock for 10^5 x Llama-70B.
    if (!(v >= 1e-3 && v <= 1e6)) m.fail("adam_gb_per_s", "must be in [0.001, 1e6] GB/s, got " + significant(v));
    g.host_adam_bytes_per_s = v * 1e9;
  }
  if (m.has("pytorch_eager")) g.eager_host = read_pytorch_eager(m.get_map("pytorch_eager"));
}

}  // namespace dlsim
