#pragma once
// Fit samples from torch.profiler traces of real training steps (`dlsim fit-kernels --trace`): each matched op's
// kernels, timed by CUPTI on the GPU alone, in the step where they ran (reading what other kernels wrote, not one
// call repeated on warm buffers as a sweep does). The traces are matched to dlsim's graphs as
// `calibrate --torch-profile` matches them (validate/calibrate/torch_profile/matched_profiles.h): a forward op's
// kernels are its graph op's; an autograd node's are those of the graph's backward ops of the same forward op.
// A unit (a forward op, or the backward ops of one forward op) becomes samples when every op in it launches one
// kernel the fitted model has a class for (an fp32 NCHW grouped convolution's layout transposes go with it: their
// time as `split` predicts it is taken off the unit's, the rest is the convolution's); where a unit holds several
// ops (a convolution's backward: data and filter gradients), its measured time is shared among them in proportion
// to `split`'s prediction for each (the trace cannot tell them apart, as calibrate cannot). Each sample also
// carries `gap_us` per kernel the unit launched: the GPU's idle time between kernels in a CUDA-graph replay, which
// a simulated kernel's time holds.
// The optimizer's foreach passes are samples of the multi_tensor class, one per launch
// (validate/calibrate/kernel_fit/multi_tensor_samples.h).
// The samples are device-timed (FitSample::device_timed): the fit gives them their own intercept apart from an
// event-timed sweep's, whose fixed costs hold PyTorch's dispatch (validate/calibrate/kernel_fit/kernel_fit.h).
#include <string>
#include <vector>

#include "hw/fitted/fitted_kernels.h"
#include "hw/gpu_spec.h"
#include "validate/calibrate/kernel_fit/trace_sample_set.h"
#include "validate/calibrate/torch_profile/host_profile_fit.h"

namespace dlsim {

TraceSamples trace_fit_samples(const std::vector<MatchedProfile>& profiles, const GpuSpec& spec,
                               const FittedKernels& split, double gap_us);

}  // namespace dlsim
