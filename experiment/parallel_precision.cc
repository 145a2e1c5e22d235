#include "experiment/parallel_precision.h"

namespace dlsim {

namespace {

bool computes_in_bf16(Precision precision, const parallel::ParallelLayout& l) {
  return l.layout == parallel::Layout::Fsdp && !l.data_parallel_single() && l.param_dtype == DType::BF16 &&
         (precision == Precision::FP32 || precision == Precision::MixedBF16);
}

}  // namespace

Precision compute_precision(Precision precision, const parallel::ParallelLayout& layout) {
  return computes_in_bf16(precision, layout) ? Precision::BF16 : precision;
}

parallel::ParallelLayout with_shard_dtype(parallel::ParallelLayout layout, Precision precision) {
  if (computes_in_bf16(precision, layout)) layout.shard_dtype = DType::F32;
  return layout;
}

void check_parallel_precision(const YamlMap& experiment, Precision precision, const parallel::ParallelLayout& l) {
  if (!l.param_dtype || !experiment.has("parallel")) return;
  const YamlMap m = experiment.get_map("parallel");
  const std::string p = to_string(precision);
  switch (*l.param_dtype) {
    case DType::BF16:
      if (precision == Precision::MixedFP16)
        m.fail("param_dtype", "bf16 parameters under precision mixed-fp16 (autocast to fp16) contradict each other; "
                              "write precision: fp32 (FSDP's policy then computes in bf16, as torchtitan) or "
                              "param_dtype: fp16");
      return;
    case DType::F16:
      if (precision == Precision::FP32)
        m.fail("param_dtype", "fp16 compute on an fp32 model needs loss scaling (ShardedGradScaler), which precision "
                              "fp32 does not have; write precision: mixed-fp16, or param_dtype: bf16");
      if (precision != Precision::MixedFP16)
        m.fail("param_dtype", "fp16 parameters under precision " + p + " contradict each other; write param_dtype: "
                              "bf16, or precision: mixed-fp16");
      return;
    case DType::F32:
      if (precision == Precision::BF16)
        m.fail("param_dtype", "fp32 on a bf16 model (precision bf16) would gather upcast copies of bf16 "
                              "parameters; drop param_dtype, or write precision: fp32 with param_dtype: bf16");
      return;
    default:
      return;
  }
}

}  // namespace dlsim
