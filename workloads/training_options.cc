#include "workloads/training_options.h"

namespace dlsim {

const char* to_string(Optimizer o) {
  switch (o) {
    case Optimizer::SgdMomentum: return "sgd-momentum";
    case Optimizer::Adam: return "adam";
    case Optimizer::AdamW: return "adamw";
  }
  return "?";
}

const char* to_string(Precision p) {
  switch (p) {
    case Precision::FP32: return "fp32";
    case Precision::MixedFP16: return "mixed-fp16";
    case Precision::MixedBF16: return "mixed-bf16";
    case Precision::BF16: return "bf16";
  }
  return "?";
}

const char* to_string(Tf32 t) {
  switch (t) {
    case Tf32::Off: return "off";
    case Tf32::Conv: return "conv";
    case Tf32::All: return "all";
  }
  return "?";
}

const char* to_string(MemoryFormat f) { return f == MemoryFormat::NCHW ? "nchw" : "nhwc"; }
const char* to_string(Kernels k) { return k == Kernels::Eager ? "eager" : "fused"; }

}  // namespace dlsim
