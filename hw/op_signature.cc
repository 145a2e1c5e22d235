#include "hw/op_signature.h"

#include "hw/internal/signature_writer.h"

namespace dlsim {

std::string op_signature(const Graph& g, const Op& op) {
  static const hw_internal::SignatureStyle plain{
      [](const Tensor& t, size_t i) { return std::to_string(t.shape[i]); },
      [](const std::string&, int64_t v) -> std::optional<std::string> { return std::to_string(v); }};
  return hw_internal::write_signature(g, op, plain);
}

}  // namespace dlsim
