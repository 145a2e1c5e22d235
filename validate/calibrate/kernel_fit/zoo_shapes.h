#pragma once
// The kernel shapes of the zoo's models, for a sweep to measure (`dlsim fit-kernels --shapes-of`, read by
// validate/torch/kernel_sweep.py): every distinct convolution (as its forward's sizes: the sweep times all three
// passes), matrix product (forward and backward GEMMs) and flash attention of the models' training graphs, as
// sweep records without times, `src` naming the first model that has it.
#include <string>
#include <vector>

#include "validate/calibrate/kernel_fit/kernel_sweep.h"

namespace dlsim {

// `models`: zoo names; `batches`: the batch sizes to build each at. Records in first-seen order.
std::vector<SweepRecord> zoo_kernel_shapes(const std::vector<std::string>& models, const std::vector<int64_t>& batches);

}  // namespace dlsim
