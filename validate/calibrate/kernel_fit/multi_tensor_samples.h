#pragma once
// Fit samples of the multi_tensor.<dtype> class (hw/fitted/multi_tensor.h) from torch.profiler traces of training
// steps (`dlsim fit-kernels --trace`): the optimizer's multi_tensor_apply_kernel launches, matched in order to the
// launches multi_tensor_apply's rule gives each pass (workloads/multi_tensor_apply.h), as
// validate/torch/membound_kernels.py matches them. A sweep measures no such kernel: without traces the class is
// not fitted, and the ops it would price keep what prices them without it.
// The passes are torch.optim's foreach SGD (_multi_tensor_sgd), by the trace's op name: the weight decay out of
// place (aten::_foreach_add: grads and params read, a new list written: three lists), the momentum
// (aten::_foreach_mul_: one list, read and written; aten::_foreach_add_(bufs, grads): two lists, three tensors
// moved) and the update (aten::_foreach_add_(params, bufs)). The tensors are the graph's foreach SGD updates'
// parameters, in order (the zoo's graphs list them as torchvision's parameters() does), or a recorded step's
// (dlsim import-torch) one-list foreach pass's tensors, in the recorded list's order. A pass whose kernels are not
// as many as the rule's launches, a graph of another optimizer or of more than one dtype group, is not sampled
// (TraceSamples::skipped says how many and why).
#include <map>
#include <string>
#include <vector>

#include "validate/calibrate/kernel_fit/trace_sample_set.h"
#include "validate/calibrate/torch_profile/host_profile_fit.h"

namespace dlsim {

// Appends the samples of `p`'s optimizer passes to `out.samples` (device-timed, `gap_us` added to each launch's
// time, as to every trace sample); `skipped` counts what was not sampled, by reason, then by op name.
void append_multi_tensor_samples(const MatchedProfile& p, double gap_us, TraceSamples& out,
                                 std::map<std::string, std::map<std::string, size_t>>& skipped);

}  // namespace dlsim
