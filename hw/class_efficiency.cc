#include "hw/class_efficiency.h"

namespace dlsim {
namespace {

constexpr MathPath kAllPaths[] = {MathPath::CudaCore, MathPath::Tf32, MathPath::Fp16, MathPath::Bf16};

std::string path_key(MathPath p) {
  std::string s = to_string(p);
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

int index_of(const std::vector<OpClass>& v, OpClass c) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] == c) return static_cast<int>(i);
  return -1;
}

}  // namespace

std::string ClassEfficiencies::compute_key(OpClass c, MathPath p) {
  return std::string(to_string(c)) + "_" + path_key(p) + "_efficiency";
}

std::string ClassEfficiencies::memory_key(OpClass c) { return std::string(to_string(c)) + "_memory_efficiency"; }

const ParamBindings<ClassEfficiencies>& ClassEfficiencies::parameters() {
  static const ParamBindings<ClassEfficiencies> b = [] {
    ParamBindings<ClassEfficiencies> bindings;
    const ParamCheck fraction = ParamCheck::zero_or(ParamCheck::above_up_to(0, 1));
    for (size_t i = 0; i < compute_classes().size(); ++i) {
      const OpClass c = compute_classes()[i];
      for (MathPath p : kAllPaths)
        bindings.add(compute_key(c, p), [i, p](auto& e) -> auto& { return e.compute[i][static_cast<size_t>(p)]; },
                     std::string("achieved fraction of the ") + to_string(p) + " peak for " + to_string(c) +
                         " kernels (0: compute_efficiency)",
                     fraction);
    }
    for (size_t j = 0; j < memory_classes().size(); ++j) {
      const OpClass c = memory_classes()[j];
      bindings.add(memory_key(c), [j](auto& e) -> auto& { return e.memory[j]; },
                   std::string("achieved fraction of the HBM bandwidth for ") + to_string(c) +
                       " kernels (0: memory_efficiency)",
                   fraction);
    }
    return bindings;
  }();
  return b;
}

double ClassEfficiencies::compute_for(OpClass c, MathPath p, double fallback) const {
  const int i = index_of(compute_classes(), c);
  if (i < 0) return fallback;
  const double v = compute[static_cast<size_t>(i)][static_cast<size_t>(p)];
  return v > 0 ? v : fallback;
}

double ClassEfficiencies::memory_for(OpClass c, double fallback) const {
  const int j = index_of(memory_classes(), c);
  if (j < 0) return fallback;
  const double v = memory[static_cast<size_t>(j)];
  return v > 0 ? v : fallback;
}

}  // namespace dlsim
