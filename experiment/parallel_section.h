#pragma once
// The `parallel:` section of an experiment: which data-parallel layout one rank runs under (issue 32).
//   parallel: {dp: 8}                        DDP on 8 GPUs (bucket_cap_mb: 25)
//   parallel: {fsdp: 8}                      FSDP2 on 8 GPUs; options reshard_after_forward (true), wrap (blocks |
//                                            root), param_dtype and reduce_dtype (fp32 | bf16 | fp16; default: the
//                                            parameter's own dtype)
//   parallel: {zero: 1, dp: 8}               ZeRO-1 (optimizer state sharded); zero: 2 shards the gradients too
//   parallel: {tp: 2}                        tensor parallelism (the Llama family's Megatron splits) on 2 GPUs;
//                                            options sequence_parallel (false), tp_across_nodes (false)
//   parallel: {fsdp: 4, tp: 2}               FSDP over 4 groups of 2 tensor-parallel GPUs: 8 GPUs (also dp, zero)
// Every error names the file, the line and the key (parallel.fsdp, parallel.param_dtype, ...).
#include "common/yaml_reader.h"
#include "parallel/parallel_layout.h"

namespace dlsim {

// The keys the section may hold.
const std::vector<std::string>& parallel_section_keys();
// Reads `key` (the experiment's "parallel") of `experiment`; the plain run when absent.
parallel::ParallelLayout read_parallel_section(const YamlMap& experiment, const std::string& key = "parallel");

}  // namespace dlsim
