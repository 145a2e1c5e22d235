#pragma once
// `checkpoint` and `sqrt`: activation checkpointing as PyTorch 1.13's torch.utils.checkpoint does it with
// use_reentrant=False, over segments of the model's own blocks (Graph::blocks: ResNet basic or bottleneck
// blocks across the stages in order, BERT and GPT-2 layers; the stem and the head stay outside).
//
// What PyTorch does (torch/utils/checkpoint.py, _checkpoint_without_reentrant, read in 1.13):
//   forward   the segment's function runs under saved-tensors hooks whose pack returns an empty Holder: no
//             tensor an op inside the segment saves is kept. The function and its arguments are held by the
//             unpack closure, which every saved variable of the segment references: the segment's inputs stay.
//   backward  the first unpack of any Holder of the segment (its first backward node that reads a saved
//             tensor) re-runs the whole function, under hooks whose inner_pack stores `inner.detach()` for each
//             saved tensor whose Holder is still alive, keyed by the Holder in a WeakKeyDictionary. The rerun's
//             other intermediates are freed as the rerun goes on; its output is discarded. Each stored tensor
//             lives until the last backward node holding it has run and released its saved variables (the
//             Holder dies, the dictionary entry goes). The RNG state is restored, so dropout draws the same mask.
//
// The plan: per segment, one Recomputation whose
//   drops  the activations an op of the segment writes and a backward op of the segment reads (what PyTorch
//          recomputes), each freed after its last use before the recomputation (free_after = -1); a tensor the
//          segment reads from outside (its inputs) is not dropped; a parameter's cast under autocast is freed
//          after the last forward op instead, as autocast's cache holds it until the autocast region exits;
//   before the position of the segment's first backward op that reads a saved tensor (not a gradient): the
//          first unpack;
//   ops    the segment's forward ops in the schedule's order, all of them (PyTorch re-runs the whole function),
//          except an op whose outputs are all still on the device then (none in the zoo's blocks) and an op the
//          schedule put after the replay (a concurrency policy may; what it writes is then not dropped).
// A drop that a later segment's replay reads (its input) is freed after that replay, not before. A segment whose
// replay would read a tensor an op outside it rewrote since the first run (an optimizer step overlapped with the
// backward pass updating a weight that a mixed-precision cast re-reads) is not checkpointed.
// In-place ops inside a block (ResNet's ReLU(inplace=True), `out += identity`) are in the plan as PyTorch replays
// them, right after the replayed op that wrote their operand, which the lowering (program/lower.h) allows.
//
// Segments:
//   checkpoint  selective: op or N -> selective checkpointing as torchtitan's (selective_checkpoint.h).
//               every: K -> consecutive segments of K blocks (the last one shorter when K does not divide the
//               number of blocks; K above it: one segment of all blocks); or segments: "0-3,4-7,9" -> those
//               block ranges (0-based, inclusive, ascending, not overlapping; blocks in no range are not
//               checkpointed). A model without blocks is an error.
//   sqrt        Chen et al. 2016 (arXiv 1604.06174, section 4.1): a chain of n layers cut into segments of about
//               sqrt(n). n = the model's blocks; each segment holds k = round(sqrt(n)) of them (ties up; at least
//               1): ResNet-50 n = 16 -> k = 4, BERT-base n = 12 -> k = 3, ResNet-152 n = 50 -> k = 7, ResNet-18
//               n = 8 -> k = 3. A model without blocks falls back to its forward op chain: n = the forward ops
//               before the loss, an in-place op counted with the op before it (checkpoint_sequential's layers).
#include <string>
#include <vector>

#include "common/param_binding.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

// One checkpointed segment: its forward ops in forward order.
using CheckpointSegment = std::vector<OpId>;

struct CheckpointOptions {
  int64_t every = 1;
  std::string segments;  // "" -> every
  std::string selective;  // "" (whole segments), "op" or N (selective_checkpoint.h)
  static const ParamBindings<CheckpointOptions>& parameters();
};

// The segments of `g` under the options (checkpoint) or Chen's rule (sqrt = true). Throws ConfigError naming the
// key ("every", "segments") when the model has no blocks or a range names a block it lacks.
std::vector<CheckpointSegment> checkpoint_segments(const Graph& g, const CheckpointOptions& o);
std::vector<CheckpointSegment> sqrt_segments(const Graph& g);
// The blocks per segment Chen's rule picks for n blocks: round(sqrt(n)), at least 1.
int64_t sqrt_segment_blocks(int64_t n);

// The plan that checkpoints `segments` under the issue order `order` (the schedule's). autocast_cache: the model's
// parameters are the leaves autocast caches the casts of (false under FSDP, whose parameters are views of its flat
// parameter: their casts are freed after their last use).
// saved_ops: per segment, the ops whose outputs a selective policy saves (selective_checkpoint.h); empty: none
// (the whole segment is recomputed, without early stop, as PyTorch 1.13 did).
SwapPlan checkpoint_plan(const Graph& g, const std::vector<OpId>& order, const std::vector<CheckpointSegment>& segments,
                         bool autocast_cache = true, const std::vector<std::vector<OpId>>& saved_ops = {});
// Per segment, the ops the options' selective policy saves (selective: op), else empty.
std::vector<std::vector<OpId>> checkpoint_saved_ops(const Graph& g, const CheckpointOptions& o,
                                                    const std::vector<CheckpointSegment>& segments);
// The segments of the registry's `checkpoint` or `sqrt` policy with these parameters (for accounting without
// planning through SwapPolicy, as `dlsim model --swap` does).
std::vector<CheckpointSegment> policy_segments(const std::string& policy, const Params& p, const Graph& g);
// That policy's plan under the issue order `order`, selective saves included.
SwapPlan policy_plan(const std::string& policy, const Params& p, const Graph& g, const std::vector<OpId>& order);

class CheckpointSwap : public SwapPolicy {
 public:
  explicit CheckpointSwap(CheckpointOptions o) : o_(std::move(o)) {}
  SwapResult plan(const SwapContext& ctx) override;

 private:
  CheckpointOptions o_;
};

class SqrtCheckpointSwap : public SwapPolicy {
 public:
  SwapResult plan(const SwapContext& ctx) override;
};

}  // namespace dlsim
