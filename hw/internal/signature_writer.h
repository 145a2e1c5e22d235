#pragma once
// The one writer of op signature text, shared by op_signature (hw/op_signature.h) and batch_free_signature
// (hw/batch_signature.h), which differ only in how a dimension and an attribute are written.
// Internal to hw/: DO NOT INCLUDE from outside it.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "workloads/graph.h"

namespace dlsim::hw_internal {

struct SignatureStyle {
  // The text of dimension `i` of tensor `t`.
  std::function<std::string(const Tensor& t, size_t i)> dim;
  // The text of an attribute's value; nullopt leaves the attribute out.
  std::function<std::optional<std::string>(const std::string& key, int64_t value)> attr;
};

// "<kind> in=<dtype>[d0,d1,...];... out=...;... attrs=<k>=<v>,..." (an absent optional input is "-"; attributes
// in name order).
std::string write_signature(const Graph& g, const Op& op, const SignatureStyle& style);

}  // namespace dlsim::hw_internal
