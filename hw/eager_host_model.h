#pragma once
// PyTorch 2.x eager mode's host: what the CPU spends issuing each op of a training step, from the hardware
// file's `host_cpu.pytorch_eager:` section (hw/host_cpu_file.h reads it; docs/host.md explains the model and
// validate/torch/fit_host_model.py fits it). With it, `launch: eager` charges the host these costs instead of
// launch_overhead_us per kernel, so that a step of many small ops is bound by the host, as PyTorch's is.
//
// Where the time goes in eager PyTorch, and how the model prices it:
// - A forward op is called from the model's Python code: nn.Module.__call__ (or a functional call), the
//   dispatcher down to the CUDA kernel, autograd recording a backward node and saving its inputs, the caching
//   allocator's host work for the outputs, and the kernel launch. One cost per op class (forward_us): a
//   convolution (cuDNN's plan lookup), a matrix product (cuBLAS), a normalisation, an elementwise or pooling op,
//   a view (no kernel). Training-mode batch norm also bumps its num_batches_tracked counter from Python: one more
//   elementwise op.
// - A backward node is run by autograd's engine thread, not Python: its bookkeeping, the dispatcher, the first
//   kernel (backward_us by class). The further kernels of the same node (a convolution's weight gradient beside
//   its data gradient, a linear layer's two products) cost extra_kernel_us each; the graph holds them as ops
//   with the same forward op. Where a tensor feeds several ops the engine sums the gradients
//   (grad_accumulate_us, one add per sum), and each parameter's AccumulateGrad stores its .grad
//   (param_grad_us, charged to the op that writes that gradient).
// - The optimizer step (PyTorch's default foreach form, or a fused one): optimizer_step_us once (Python,
//   grouping the tensors, the foreach calls over the lists) and optimizer_tensor_us per parameter it updates
//   (list building and the out-of-place results); the graph holds one op per parameter or one fused op.
// - backward_start_us once per step at the first backward op: loss.backward()'s seed gradient and the engine's
//   start (in the measured profiles, about a millisecond inside the loss's backward).
// Kernels launched inside a library call (cuDNN's layout transposes, layout_transpose=1) cost extra_kernel_us.
// Copies (swapping) keep launch_overhead_us, and launch: cuda-graph does not use this model (a replay issues
// no ops).
#include <array>
#include <cstddef>
#include <vector>

#include "workloads/graph.h"

namespace dlsim {

using TimeNs = int64_t;

// The op classes the per-op costs are given for (the keys under forward_us and backward_us).
enum class HostOpClass : uint8_t { Conv, Matmul, Norm, Elementwise, View };
inline constexpr size_t kHostOpClasses = 5;
const char* to_string(HostOpClass c);  // "conv", "matmul", "norm", "elementwise", "view"
// The class an op kind's host cost is priced by (a backward kind by its forward op's class).
HostOpClass host_op_class(OpKind k);

// The `host_cpu.pytorch_eager:` section, in ns.
struct EagerHostSpec {
  std::array<TimeNs, kHostOpClasses> forward_ns{};
  std::array<TimeNs, kHostOpClasses> backward_ns{};  // View: a backward node with no kernel of its own
  TimeNs extra_kernel_ns = 0;
  TimeNs grad_accumulate_ns = 0;
  TimeNs param_grad_ns = 0;
  TimeNs backward_start_ns = 0;
  TimeNs optimizer_step_ns = 0;
  TimeNs optimizer_tensor_ns = 0;
  bool operator==(const EagerHostSpec&) const = default;
};

// What the host pays for each op of a graph: `issue_ns[op]` every time the op is launched (a recomputation
// launches it again), `once_ns[op]` more the first time in an iteration (the step's fixed costs, on the first
// backward and the first optimizer op).
struct EagerHostCharges {
  std::vector<TimeNs> issue_ns;
  std::vector<TimeNs> once_ns;
};
EagerHostCharges eager_host_charges(const EagerHostSpec& spec, const Graph& g);

}  // namespace dlsim
