#include "workloads/model_options.h"

#include "common/config_error.h"

namespace dlsim {

int64_t image_size_or(const ModelOptions& opts, int64_t fallback, const std::string& model) {
  if (opts.image_size < 0) throw ConfigError(model, 0, "image_size", "image size must be positive, got " + std::to_string(opts.image_size));
  return opts.image_size == 0 ? fallback : opts.image_size;
}

const char* to_string(Attention a) { return a == Attention::Eager ? "eager" : "sdpa-flash"; }

}  // namespace dlsim
