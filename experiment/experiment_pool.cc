#include "experiment/experiment_pool.h"

#include "common/config_error.h"

namespace dlsim {

std::unique_ptr<PoolPolicy> make_pool(const Experiment& e, DeviceMemory& device) {
  try {
    return pool_registry().get(e.pool.name).factory(e.pool.params, device);
  } catch (const ConfigError& err) {
    if (!err.file().empty()) throw;
    throw ConfigError(e.file, e.pool.line, err.key().empty() ? "pool" : "pool." + err.key(), err.message());
  }
}

}  // namespace dlsim
