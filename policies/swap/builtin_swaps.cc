// The built-in swap policies, in the order `dlsim list` shows them.
#include "policies/swap/capuchin/capuchin_swap.h"
#include "policies/swap/checkmate/checkmate_swap.h"
#include "policies/swap/checkpoint/checkpoint_swap.h"
#include "policies/swap/dtr/dtr_swap.h"
#include "policies/swap/fastest_under_limit/fastest_under_limit.h"
#include "policies/swap/save_on_cpu/save_on_cpu_swap.h"
#include "policies/swap/singa/singa_swap.h"
#include "policies/swap/core/swap_policy.h"
#include "policies/swap/swapadvisor/swapadvisor_swap.h"
#include "policies/swap/vdnn/vdnn_swap.h"
#include "policies/swap/offload/zero_offload_swap.h"

namespace dlsim {

namespace {
// Keeps every tensor on the device.
class NoSwap : public SwapPolicy {
 public:
  SwapResult plan(const SwapContext&) override { return {}; }
};
}  // namespace

const SwapRegistry& swap_registry() {
  static const SwapRegistry reg = [] {
    SwapRegistry r("swap policy");
    r.add({"none", "keep every tensor in device memory", {},
           [](const Params&) -> std::unique_ptr<SwapPolicy> { return std::make_unique<NoSwap>(); }});
    r.add({"singa", "SINGA's automatic swapping (Zhang et al. 2019): peak-straddling candidates ranked by DOA/AOA/WDOA "
                    "or majority vote, greedy selection to a limit, no-overhead or stick-to-limit scheduling",
           SingaOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<SwapPolicy> {
             return std::make_unique<SingaSwap>(SingaOptions::parameters().from_params(p));
           }});
    r.add({"vdnn", "vDNN (Rhu et al. 2016): each layer's input feature maps offloaded in the forward pass and "
                   "prefetched one layer ahead in the backward pass, synchronised at layer boundaries",
           VdnnOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<SwapPolicy> {
             return std::make_unique<VdnnSwap>(VdnnOptions::parameters().from_params(p));
           }});
    r.add({"save-on-cpu", "PyTorch's torch.autograd.graph.save_on_cpu(pin_memory=True): every saved tensor packed "
                          "to pinned host memory when saved, unpacked when backward needs it, on the compute stream",
           {}, [](const Params&) -> std::unique_ptr<SwapPolicy> { return std::make_unique<SaveOnCpuSwap>(); }});
    r.add({"swapadvisor", "SwapAdvisor (Huang et al. 2020): a genetic algorithm over the op schedule and a size-class "
                          "memory split, swaps by furthest next use with early swap-in, scored by the simulator",
           SwapAdvisorOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<SwapPolicy> {
             return std::make_unique<SwapAdvisorSwap>(SwapAdvisorOptions::parameters().from_params(p));
           }});
    r.add({"fastest-under-limit", "ours: for a memory limit, the fastest plan found by a greedy cover refined on a fast "
                                  "timeline, judged by the simulator beside SINGA's and vDNN's plans at the same limit",
           FastestUnderLimitOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<SwapPolicy> {
             return std::make_unique<FastestUnderLimit>(FastestUnderLimitOptions::parameters().from_params(p));
           }});
    r.add({"checkpoint", "PyTorch's torch.utils.checkpoint(use_reentrant=False) over segments of the model's blocks "
                         "(every K blocks, or explicit block ranges): segment inputs kept, the rest recomputed in "
                         "the backward pass; or torchtitan's selective checkpointing (per op, or every N-th block)",
           CheckpointOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<SwapPolicy> {
             return std::make_unique<CheckpointSwap>(CheckpointOptions::parameters().from_params(p));
           }});
    r.add({"sqrt", "Chen et al. 2016's sqrt(N) checkpointing: segments of round(sqrt(N)) of the model's N blocks "
                   "(a model without blocks: its forward op chain), checkpointed as `checkpoint` does",
           {}, [](const Params&) -> std::unique_ptr<SwapPolicy> { return std::make_unique<SqrtCheckpointSwap>(); }});
    r.add({"dtr", "DTR (Kirisame et al. 2021): greedy eviction under a budget by the h_DTR score (cost of the evicted "
                  "neighbourhood / (bytes x staleness)), evicted tensors recomputed on demand; no copies",
           DtrOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<SwapPolicy> {
             return std::make_unique<DtrSwap>(DtrOptions::parameters().from_params(p));
           }});
    r.add({"capuchin", "Capuchin (Peng et al. 2020): per tensor across the peak, a swap when the transfer hides behind "
                       "compute, else the cheaper of swap and recomputation ranked by memory saved per second",
           CapuchinOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<SwapPolicy> {
             return std::make_unique<CapuchinSwap>(CapuchinOptions::parameters().from_params(p));
           }});
    r.add({"checkmate", "Checkmate (Jain et al. 2020): the recomputation plan of least re-run time under a memory budget, "
                        "from its MILP solved by CBC (coinor-cbc) with a time limit, or its LP rounding; a large graph "
                        "on a coarse graph of segments; never worse than dtr, capuchin or checkpoint at the budget",
           CheckmateOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<SwapPolicy> {
             return std::make_unique<CheckmateSwap>(CheckmateOptions::parameters().from_params(p));
           }});
    r.add({"zero-offload", "ZeRO-Offload (Ren et al. 2021): fp32 master weights and Adam state in host memory, the "
                           "optimizer step on the CPU, gradients streamed out in the backward pass and weights back "
                           "after the step; optional delayed update and activation checkpointing",
           ZeroOffloadOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<SwapPolicy> {
             return std::make_unique<ZeroOffloadSwap>(ZeroOffloadOptions::parameters().from_params(p));
           }});
    r.add({"param-offload", "FSDP's CPUOffload(offload_params=True): parameters in host memory, fetched for each use "
                            "in the forward and backward passes and freed after; gradients to the host and the "
                            "optimizer step on the CPU (PyTorch's CPU Adam by default)",
           ParamOffloadOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<SwapPolicy> {
             return std::make_unique<ParamOffloadSwap>(ParamOffloadOptions::parameters().from_params(p));
           }});
    return r;
  }();
  return reg;
}

}  // namespace dlsim
