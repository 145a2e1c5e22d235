#pragma once
// `zero-offload`: ZeRO-Offload on one GPU (Ren et al., "ZeRO-Offload: Democratizing Billion-Scale Model
// Training", USENIX ATC'21; DeepSpeed's `zero_optimization.offload_optimizer: {device: cpu}`). The fp32 master
// weights and Adam's moments live in host memory; the optimizer step runs on the CPU (DeepSpeedCPUAdam, timed by
// the hardware file's host_cpu.adam_gb_per_s); each gradient is copied to the host after its last use in the
// backward pass and freed on the device; the updated weights are copied back after the step. The device keeps
// the weights in the precision the experiment trains them in (DeepSpeed's bf16/fp16 modes: `precision: bf16`).
// With delayed_update the step overlaps the next iteration's forward and backward passes, which use weights one
// step older (the paper's delayed parameter update, DPU). With checkpoint_every K > 0 the activations are also
// checkpointed every K blocks, as `checkpoint` does (DeepSpeed's usual pairing with activation checkpointing).
//
// Simplifications, each small: gradients leave one by one as their last backward op ends, not in DeepSpeed's
// reduce buckets (its default bucket of 5e8 elements batches them; the bytes are the same); weights come back one
// by one after the step rather than in the CPU optimizer's tiles; the step is one CPU activity per optimizer op.
#include <cstdint>
#include <string>

#include "common/param_binding.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

struct ZeroOffloadOptions {
  bool delayed_update = false;
  int64_t checkpoint_every = 0;  // 0: no activation checkpointing
  static const ParamBindings<ZeroOffloadOptions>& parameters();
};

class ZeroOffloadSwap : public SwapPolicy {
 public:
  explicit ZeroOffloadSwap(ZeroOffloadOptions o) : o_(o) {}
  SwapResult plan(const SwapContext& ctx) override;

 private:
  ZeroOffloadOptions o_;
};

// `param-offload`: FSDP's CPUOffload(offload_params=True) on one GPU (torch.distributed.fsdp): the parameters live
// in host memory as well, fetched into device memory for each use (the forward pass, then the backward pass; a
// recomputation's reads count in the backward) and freed after it, so the device holds only the parameters in use.
// Gradients go to the host as under zero-offload and the optimizer steps the host parameters on the CPU. FSDP runs the
// user's optimizer there: `cpu_optimizer: torch` (default) is PyTorch's CPU Adam, 8.2 / 56 of DeepSpeedCPUAdam's
// rate (the hardware file's host_cpu.adam_gb_per_s) as DeepSpeed PR #735 measured both on one 11.6 B model;
// `deepspeed` passes DeepSpeedCPUAdam. prefetch_ops issues each fetch that many ops ahead of its first use (0: right
// before, as FSDP does without forward_prefetch). Simplifications: a parameter is fetched alone, as its first use
// needs it, not with its FSDP unit's others; no all-gather (one GPU).
struct ParamOffloadOptions {
  int64_t prefetch_ops = 0;
  std::string cpu_optimizer = "torch";
  int64_t checkpoint_every = 0;
  static const ParamBindings<ParamOffloadOptions>& parameters();
};

// DeepSpeed PR #735: torch.optim.Adam took 56 s and DeepSpeedCPUAdam 8.2 s for one step of an 11.6 B model.
inline constexpr double kTorchCpuAdamRateScale = 8.2 / 56.0;

class ParamOffloadSwap : public SwapPolicy {
 public:
  explicit ParamOffloadSwap(ParamOffloadOptions o) : o_(std::move(o)) {}
  SwapResult plan(const SwapContext& ctx) override;

 private:
  ParamOffloadOptions o_;
};

}  // namespace dlsim
