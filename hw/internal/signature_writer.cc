#include "hw/internal/signature_writer.h"

namespace dlsim::hw_internal {
namespace {

void append_tensors(std::string& s, const Graph& g, const std::vector<TensorId>& ids, const SignatureStyle& style) {
  bool first = true;
  for (TensorId id : ids) {
    if (!first) s += ';';
    first = false;
    if (id == kNoTensor) {  // an absent optional input (e.g. no bias) still holds its place
      s += '-';
      continue;
    }
    const Tensor& t = g.tensor(id);
    s += to_string(t.dtype);
    s += '[';
    for (size_t i = 0; i < t.shape.size(); ++i) {
      if (i) s += ',';
      s += style.dim(t, i);
    }
    s += ']';
  }
}

// The multi-tensor charge (workloads/multi_tensor_apply.h): which of a foreach pass's launches an op is charged and
// what they move, not what the op computes. A per-parameter update keeps its signature (a kernel table measured on
// the harness's fused updates still finds it) whichever launches its parameter closes.
bool is_charge_attribute(const std::string& key) {
  return key == "launches" || key == "chunk_bytes" || key == "foreach_bytes";
}

}  // namespace

std::string write_signature(const Graph& g, const Op& op, const SignatureStyle& style) {
  std::string s = to_string(op.kind);
  s += " in=";
  append_tensors(s, g, op.inputs, style);
  s += " out=";
  append_tensors(s, g, op.outputs, style);
  s += " attrs=";
  bool first = true;
  for (const auto& [k, v] : op.written_attributes()) {  // std::map: name order, deterministic
    if (is_charge_attribute(k)) continue;
    const std::optional<std::string> text = style.attr(k, v);
    if (!text) continue;
    if (!first) s += ',';
    first = false;
    s += k + "=" + *text;
  }
  return s;
}

}  // namespace dlsim::hw_internal
