#include "hw/hardware.h"

#include "hw/pcie_link.h"
#include "hw/roofline.h"
#include "hw/table_cost_model.h"

namespace dlsim {

std::unique_ptr<KernelCostModel> make_cost_model(const GpuSpec& spec) {
  if (!spec.kernel_times.empty() || !spec.kernel_times_by_batch.empty()) return std::make_unique<TableCostModel>(spec);
  return std::make_unique<RooflineCostModel>(spec);
}

Hardware load_hardware(const std::string& name_or_path) {
  Hardware h;
  h.spec = load_gpu_spec(resolve_hw_path(name_or_path));
  h.kernels = make_cost_model(h.spec);
  h.link = std::make_unique<PcieLink>(h.spec);
  return h;
}

}  // namespace dlsim
