#pragma once
// `save-on-cpu`: PyTorch's torch.autograd.graph.save_on_cpu(pin_memory=True), the offload most PyTorch users
// have. Its saved-tensors hooks (torch/autograd/graph.py) do, for every tensor an op saves for backward:
//   pack:   a pinned host tensor of the same shape, then packed.copy_(tensor): a device-to-host copy on the
//           current stream, blocking the host until it is done (copy_ is not non_blocking);
//   unpack: tensor.to(device, non_blocking=True): a host-to-device copy on the current stream, when the
//           backward node that saved it runs, into new device memory that lives as long as the node needs it.
// The hooks skip nothing: parameters a layer saves (a convolution's or a linear layer's weight) are packed
// and unpacked too, although their device copy stays (the module holds it). A tensor saved by two ops is
// packed twice and unpacked once per node. Meanwhile the device copy of an activation is freed as soon as no
// forward op needs it, because autograd holds only the packed one.
// Here: "saved by op F" is what the graph's backward ops of F read that is not a gradient (workloads/
// training_backward.cc keeps exactly PyTorch's saved set). Each pack is a to-host ExtraCopy after F; an activation is
// dropped (no second copy) after its last forward use and brought back by a copy-in right before the first
// op of each node that reads it, dropped again after that node's last read; a parameter's unpack is a
// to-device ExtraCopy before the node (its transient second device buffer is not counted). All copies are in
// line on the compute stream, each pack followed by a host wait. Tests: save_on_cpu_swap_test.cc; the bytes
// against PyTorch's own hooks: validate/torch/torch_save_on_cpu_bytes.py.
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

class SaveOnCpuSwap : public SwapPolicy {
 public:
  SwapResult plan(const SwapContext& ctx) override;
};

}  // namespace dlsim
