#include "hw/fitted/multi_tensor.h"

#include "hw/fitted/kernel_terms.h"
#include "workloads/multi_tensor_apply.h"

namespace dlsim {

KernelShape multi_tensor_charged_shape(DType dtype, double bytes, double launches, double chunk_bytes) {
  KernelShape s;
  s.family = KernelFamily::MultiTensor;
  s.dtype = dtype;
  s.bytes = bytes;
  s.launches = launches;
  s.chunk_bytes = chunk_bytes;
  return s;
}

std::vector<KernelShape> multi_tensor_pass_shapes(const std::vector<int64_t>& numels, int lists, DType dtype,
                                                  int64_t bytes_per_element) {
  std::vector<KernelShape> out;
  const double per = static_cast<double>(bytes_per_element);
  for (const MultiTensorLaunch& l : multi_tensor_launches(numels, lists))
    out.push_back(multi_tensor_charged_shape(dtype, static_cast<double>(l.elements) * per, 1,
                                             static_cast<double>(l.largest_chunk) * per));
  return out;
}

double multi_tensor_pass_us(const FittedKernelClass& c, const GpuSpec& spec, const FittedKernels& fitted,
                            const std::vector<int64_t>& numels, int lists, DType dtype, int64_t bytes_per_element) {
  double us = 0;
  for (const KernelShape& s : multi_tensor_pass_shapes(numels, lists, dtype, bytes_per_element))
    us += class_time_us(c, kernel_terms(s, spec, fitted));
  return us;
}

}  // namespace dlsim
