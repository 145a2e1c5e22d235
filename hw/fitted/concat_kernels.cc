#include "hw/fitted/concat_kernels.h"

#include <algorithm>
#include <cmath>

namespace dlsim {

std::vector<KernelShape> concat_kernel_shapes(const std::vector<double>& input_bytes, int rank, DType dtype, int sms) {
  std::vector<double> parts;
  for (double b : input_bytes)
    if (b > 0) parts.push_back(b);
  std::vector<KernelShape> v;
  if (parts.size() < 2 || rank > kCatMaxDims) {  // copy_ per input
    for (double b : parts) {
      KernelShape s;
      s.family = KernelFamily::Elementwise;
      s.dtype = dtype;
      s.bytes = 2 * b;
      v.push_back(s);
    }
    return v;
  }
  const double max_blocks = kCatBlocksPerSm * std::max(sms, 1);
  double widest = 0;  // the largest input so far: PyTorch does not reset it between batches
  auto blocks = [&](double bytes) { return std::min(max_blocks, std::ceil(bytes / kCatBlockBytes)); };
  for (size_t i = 0; i < parts.size(); i += kCatBatchInputs) {
    KernelShape s;
    s.family = KernelFamily::Concat;
    s.dtype = dtype;
    const size_t end = std::min(parts.size(), i + kCatBatchInputs);
    for (size_t j = i; j < end; ++j) {
      s.bytes += 2 * parts[j];
      widest = std::max(widest, parts[j]);
    }
    s.inputs = static_cast<double>(end - i);
    s.input_blocks = blocks(widest);
    for (size_t j = i; j < end; ++j) s.idle_blocks += s.input_blocks - blocks(parts[j]);
    v.push_back(s);
  }
  return v;
}

}  // namespace dlsim
