#pragma once
// Selective activation checkpointing as torchtitan runs it on its Llama models (`[activation_checkpoint] mode =
// 'selective'`, torchtitan/parallelisms/parallelize_llama.py at 9dec370, 2024-12-26: the commit of its published
// H100 benchmarks, results/multi-gpu/published.yaml), as the `selective` key of the `checkpoint` swap policy.
//
// selective: op   per-op SAC. Each checkpointed region (a block, or `every` K blocks, or a `segments` range) runs
//                 under torch.utils.checkpoint(use_reentrant=False) with a context_fn from
//                 create_selective_checkpoint_contexts whose policy answers MUST_SAVE for the outputs of
//                   aten.mm (every one but the even-numbered ones: torchtitan counts the region's mm calls in
//                          forward order from 1 and recomputes the 2nd, 4th, ...: "saves output of all compute
//                          ops, except every second mm"),
//                   the flash and memory-efficient SDPA kernels (all their outputs: the attention output and
//                          its log-sum-exp),
//                   _c10d_functional.reduce_scatter_tensor (sequence parallel's), and aten.abs / aten.max
//                          (float8's amax; no dlsim model runs them),
//                 and PREFER_RECOMPUTE for every other op. In dlsim's graph an aten.mm is a Linear op without
//                 bias (nn.Linear on a (B, S, in) input without bias dispatches view + mm); a biased Linear is
//                 addmm and a MatMul of a 4-D product bmm, neither on the list. On a Llama block the mms are
//                 q, k, v, o, gate, up, down: q, v, gate and down are saved, k, o and up recomputed.
// selective: N    per-layer SAC (a positive integer): block i (0-based) is checkpointed whole, alone, when
//                 (i + 1) % N == 0 (torchtitan counts the blocks it wraps from 1 and wraps every N-th one:
//                 N = 2 checkpoints blocks 1, 3, 5, ...; N = 1 every block).
//
// What PyTorch does with such a policy (torch/utils/checkpoint.py, _CachingTorchDispatchMode and
// _CachedTorchDispatchMode, read in 2.4 to 2.11): in the forward pass every op's output the policy saves is
// stored in the region's cache (a list per op, in call order), and autograd's saved tensors of the region are
// replaced by empty holders, as full checkpointing does. At the region's first backward unpack the function runs
// again: an op the policy saves is not run, its output popped from the cache; every other op runs. With early
// stop (the default since 2.1) the recomputation ends once every holder is filled again, so ops after the last one
// that makes a tensor the backward reads do not run. A saved output lives from its op to the recomputation
// (the cache) and then as long as a recomputed op or a backward op reads it.
//
// In the plan (checkpoint_plan): a region's drops are its activations the backward reads less what the policy
// saves; its replay is the region's ops in order but those whose outputs are all saved (or all still on the device),
// up to the last one that makes a dropped tensor (early stop); Recomputation::held are the saved outputs (kept
// until the replay, as the cache keeps them).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workloads/graph.h"

namespace dlsim {

struct SelectiveCheckpointing {
  enum class Mode : uint8_t { Full, Op, Layer };
  Mode mode = Mode::Full;
  int64_t layer_every = 0;  // Mode::Layer: checkpoint every N-th block
};

// "" -> Full, "op" -> Op, a positive integer N -> Layer every N; nullopt for anything else.
std::optional<SelectiveCheckpointing> parse_selective(const std::string& s);

// The ops of `region` (forward ops, in forward order) whose outputs torchtitan's op policy saves.
std::vector<OpId> op_policy_saved_ops(const Graph& g, const std::vector<OpId>& region);

// Whether `op` is an aten.mm for the policy (a Linear without bias).
bool is_aten_mm(const Op& op);

// The blocks per-layer SAC checkpoints out of n: i with (i + 1) % every == 0.
std::vector<int64_t> layer_policy_blocks(int64_t n, int64_t every);

}  // namespace dlsim
