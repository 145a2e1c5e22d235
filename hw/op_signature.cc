#include "hw/op_signature.h"

namespace dlsim {
namespace {

void append_tensors(std::string& s, const Graph& g, const std::vector<TensorId>& ids) {
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
      s += std::to_string(t.shape[i]);
    }
    s += ']';
  }
}

}  // namespace

std::string op_signature(const Graph& g, const Op& op) {
  std::string s = to_string(op.kind);
  s += " in=";
  append_tensors(s, g, op.inputs);
  s += " out=";
  append_tensors(s, g, op.outputs);
  s += " attrs=";
  bool first = true;
  for (const auto& [k, v] : op.attrs.all()) {  // std::map: name order, deterministic
    if (!first) s += ',';
    first = false;
    s += k + "=" + std::to_string(v);
  }
  return s;
}

}  // namespace dlsim
