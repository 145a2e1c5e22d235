#pragma once
// The training steps of a torch.profiler trace (validate/calibrate/torch_profile/profiler_trace.h), each cut into
// what eager PyTorch's host did: the forward's top-level aten ops on the Python thread, autograd's nodes
// (`autograd::engine::evaluate_function: XBackward0`, on the engine's thread on a GPU and on the calling thread on
// the CPU), the optimizer's step and zero_grad (their record_function spans), and the ops that fit none of these.
// A step is a `ProfilerStep#N` span (prof.step() with a schedule); a trace without one is one step from its first
// to its last host op. "Top-level" is an op no other cpu_op of its thread encloses (a composite op such as
// aten::linear is one op; its aten::t and aten::addmm inside are not).
#include <cstdint>
#include <string>
#include <vector>

#include "validate/calibrate/torch_profile/profiler_trace.h"

namespace dlsim {

// One top-level host op: the event, and what ran inside it that the fit uses.
struct ProfileHostOp {
  size_t event = 0;  // index into ProfilerTrace::events
  // A backward node: the gradient sums autograd's engine ran inside it (aten::add / aten::add_ directly under the
  // node: the InputBuffer accumulating a tensor's second gradient), their time in µs.
  int64_t grad_sums = 0;
  double grad_sum_us = 0;
  // The GPU's kernels its launches issued (matched by correlation id), their time on the GPU in µs.
  int64_t kernels = 0;
  double kernel_us = 0;
  std::vector<double> kernel_each_us;  // each of those kernels' time, in the order their launches ran
};

struct ProfileStep {
  std::string name;        // "ProfilerStep#3", or "whole trace"
  double start_us = 0, end_us = 0;
  std::string main_thread;
  std::vector<ProfileHostOp> forward;   // in time order
  std::vector<ProfileHostOp> backward;  // autograd nodes (AccumulateGrad included), in time order
  const ProfileEvent* seed = nullptr;   // loss.backward()'s aten::ones_like, when the trace has it
  const ProfileEvent* optimizer = nullptr;  // the Optimizer.step#... span
  std::vector<ProfileHostOp> optimizer_ops;  // top-level ops inside it
  const ProfileEvent* zero_grad = nullptr;   // the Optimizer.zero_grad#... span
  std::vector<ProfileHostOp> other;          // top-level host ops outside all of the above
  // Time the Python thread spent waiting for the GPU (cudaDeviceSynchronize, cudaStreamSynchronize,
  // cudaEventSynchronize, blocking copies' device-to-host reads), µs.
  double sync_wait_us = 0;
  double span_us() const { return end_us - start_us; }
};

// The trace's steps in time order. Throws ConfigError(trace.file) when a ProfilerStep span holds no host op.
std::vector<ProfileStep> profile_steps(const ProfilerTrace& trace);

// Whether a cpu_op is an autograd node's evaluation, and the node's name ("ConvolutionBackward0",
// "torch::autograd::AccumulateGrad").
bool is_autograd_node(const ProfileEvent& e);
std::string autograd_node_name(const ProfileEvent& e);
bool is_accumulate_grad(const ProfileEvent& e);

}  // namespace dlsim
