#include "hw/hardware.h"

#include "hw/pcie_link.h"

namespace dlsim {

std::unique_ptr<KernelCostModel> make_cost_model(const GpuSpec& spec) {
  const auto& entry = kernel_model_registry().get(spec.kernel_model, spec.file, 0, "kernel_model");
  Params p(entry.params);  // a spec built in code may name none: the declared defaults
  for (const auto& [k, v] : spec.kernel_model_params.values()) p.set(k, v);
  return entry.factory(p, spec);
}

Hardware load_hardware(const std::string& name_or_path) {
  Hardware h;
  h.spec = load_gpu_spec(resolve_hw_path(name_or_path));
  h.kernels = make_cost_model(h.spec);
  h.link = std::make_unique<PcieLink>(h.spec);
  return h;
}

}  // namespace dlsim
