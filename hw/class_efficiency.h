#pragma once
// The roofline's efficiencies per op class (hw/op_class.h): what fraction of the path's peak a convolution or
// GEMM reaches, by math path (hw/math_path.h: CUDA cores, TF32, fp16 or bf16 tensor cores), and what fraction of
// the HBM bandwidth each memory-bound class reaches. Each is a parameter of the roofline model, declared here
// once with its range; 0 (the default) means "not set": the model's compute_efficiency / memory_efficiency
// stands. `dlsim calibrate --published` fits them per GPU to published throughput (validate/calibrate/published_regression.h)
// and writes them into the hardware files, marked [F].
#include <array>
#include <string>
#include <vector>

#include "common/param_binding.h"
#include "hw/math_path.h"
#include "hw/op_class.h"

namespace dlsim {

struct ClassEfficiencies {
  static constexpr size_t kPaths = 4;  // MathPath values
  // compute[i][p]: compute_classes()[i] on path p; memory[j]: memory_classes()[j]. 0: not set.
  std::array<std::array<double, kPaths>, 4> compute{};
  std::array<double, 4> memory{};

  // "conv_fwd_tf32_efficiency", "gemm_cuda_core_efficiency", ...; "normalization_memory_efficiency", ...
  static std::string compute_key(OpClass c, MathPath p);
  static std::string memory_key(OpClass c);
  static const ParamBindings<ClassEfficiencies>& parameters();  // one per compute class and path, one per memory class

  // The efficiency an op of class c on path p reaches, or `fallback` when none is set for it (memory classes
  // have no compute efficiency of their own; compute classes no memory efficiency of their own).
  double compute_for(OpClass c, MathPath p, double fallback) const;
  double memory_for(OpClass c, double fallback) const;
  bool operator==(const ClassEfficiencies&) const = default;
};

}  // namespace dlsim
