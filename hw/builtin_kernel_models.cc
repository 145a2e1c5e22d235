// The built-in kernel cost models, in the order `dlsim list` shows them. Each register_* lives beside its model.
#include "hw/fitted/fitted_cost_model.h"
#include "hw/roofline.h"
#include "hw/table_cost_model.h"

namespace dlsim {

const KernelModelRegistry& kernel_model_registry() {
  static const KernelModelRegistry reg = [] {
    KernelModelRegistry r("kernel model");
    register_roofline(r);
    register_table(r);
    register_fitted(r);
    return r;
  }();
  return reg;
}

}  // namespace dlsim
