#include "parallel/parallel_layout.h"

namespace dlsim::parallel {

const char* to_string(Layout l) {
  switch (l) {
    case Layout::Single: return "single";
    case Layout::Ddp: return "dp";
    case Layout::Fsdp: return "fsdp";
    case Layout::Zero: return "zero";
  }
  return "?";
}

const char* to_string(FsdpWrap w) {
  switch (w) {
    case FsdpWrap::Blocks: return "blocks";
    case FsdpWrap::Root: return "root";
  }
  return "?";
}

std::optional<DType> mixed_precision_dtype(const std::string& name) {
  for (DType t : {DType::F32, DType::BF16, DType::F16})
    if (name == mixed_precision_name(t)) return t;
  return std::nullopt;
}

const char* mixed_precision_name(DType t) {
  switch (t) {
    case DType::F32: return "fp32";
    case DType::BF16: return "bf16";
    case DType::F16: return "fp16";
    default: return "?";
  }
}

std::string ParallelLayout::label() const {
  std::string t;  // the tensor-parallel part, after the data-parallel one
  if (tp != 1 || sequence_parallel || tp_across_nodes) {
    t = "tp=" + std::to_string(tp);
    if (sequence_parallel) t += "(sequence_parallel)";
    if (tp_across_nodes) t += "(tp_across_nodes)";
  }
  const std::string d = data_parallel_label();
  if (t.empty()) return d;
  return d == "single" ? t : d + "," + t;
}

std::string ParallelLayout::data_parallel_label() const {
  const std::string n = std::to_string(ranks);
  switch (layout) {
    case Layout::Single: return "single";
    case Layout::Ddp: return "dp=" + n + (bucket_cap_mb != 25 ? "(bucket_cap_mb=" + std::to_string(bucket_cap_mb) + ")" : "");
    case Layout::Zero:
      return "zero" + std::to_string(zero_stage) + ",dp=" + n +
             (bucket_cap_mb != 25 ? "(bucket_cap_mb=" + std::to_string(bucket_cap_mb) + ")" : "");
    case Layout::Fsdp: {
      std::string d;
      auto add = [&d](const std::string& s) { d += (d.empty() ? "" : ",") + s; };
      if (!reshard_after_forward) add("reshard_after_forward=false");
      if (wrap != FsdpWrap::Blocks) add(std::string("wrap=") + to_string(wrap));
      if (param_dtype) add(std::string("param_dtype=") + mixed_precision_name(*param_dtype));
      if (reduce_dtype) add(std::string("reduce_dtype=") + mixed_precision_name(*reduce_dtype));
      return "fsdp=" + n + (d.empty() ? "" : "(" + d + ")");
    }
  }
  return "?";
}

}  // namespace dlsim::parallel
