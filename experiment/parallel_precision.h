#pragma once
// What an experiment's `precision:` means under FSDP's MixedPrecisionPolicy (`parallel: {fsdp: N, param_dtype:
// bf16}`), as PyTorch runs it. fully_shard with param_dtype=bf16 on an fp32 model all-gathers bf16 copies of the
// parameters and runs the module on them, so that without autocast every activation, the gathered parameters and
// their unsharded gradients are bf16 (what torchtitan runs), while the sharded parameters, their gradients after
// the reduce-scatter (in reduce_dtype, then cast to the parameter's dtype) and the optimizer state stay fp32.
// dlsim builds that rank as the model in bf16 (Precision::BF16: no autocast) whose shards, sharded gradients and
// optimizer state fsdp_graph keeps in fp32 (ParallelLayout::shard_dtype).
//   precision fp32       + param_dtype bf16   computes in bf16 (torchtitan's setting)
//   precision mixed-bf16 + param_dtype bf16   the same: autocast on bf16 parameters casts nothing for the
//                                             matmuls; its fp32 ops (norms, softmax, the loss) are not modelled
//                                             apart from what the bf16 model's ops do in fp32 themselves
//   precision bf16       + param_dtype bf16   the model is bf16 already: shards in bf16, as PyTorch
//   precision mixed-fp16 + param_dtype fp16   autocast's graph on fp16 gathered parameters (its casts of them
//                                             copy nothing and are removed: parallel/internal/elide_casts.h)
//   param_dtype fp32                          gathers in the parameter's dtype: no change (not on a bf16 model)
// Every other pairing contradicts itself and is an error at parallel.param_dtype's line.
#include "common/yaml_reader.h"
#include "parallel/parallel_layout.h"
#include "workloads/training_options.h"

namespace dlsim {

// The precision the rank's training graph is built in: BF16 where the layout computes in bf16 (above), else
// `precision` itself. One rank (fsdp: 1) runs without a wrapper, as the plain run.
Precision compute_precision(Precision precision, const parallel::ParallelLayout& layout);
// The layout with shard_dtype set (fp32) where compute_precision builds the graph in bf16 from an fp32 model.
parallel::ParallelLayout with_shard_dtype(parallel::ParallelLayout layout, Precision precision);
// Throws ConfigError at `experiment`'s parallel.param_dtype for a pairing the table above does not allow.
void check_parallel_precision(const YamlMap& experiment, Precision precision, const parallel::ParallelLayout& layout);

}  // namespace dlsim
