#pragma once
// What a data-parallel run reports beside its iteration time (issue 32 item 4; docs/multi-gpu.md defines each):
// the exposed communication time, throughput per GPU and MFU.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "common/sim_time.h"
#include "hw/gpu_spec.h"
#include "program/trace.h"
#include "workloads/graph.h"
#include "workloads/training_options.h"

namespace dlsim {

// One GPU's model FLOPs per iteration, counted before the data-parallel layout shards anything. Under tensor
// parallelism of degree tp the graph is already one tp rank's (the builder shards it): its parameters are that
// rank's, and the attention term and the samples are shared by the tp group's GPUs, so both count 1/tp.
struct ModelFlops {
  double per_iteration = 0;
  // "6N+12LHS": a Llama-family graph (a token embedding, transformer blocks), counted as torchtitan and the MFU
  // of results/multi-gpu/published.yaml count (validate/published_multi_gpu.py, mfu_from_tokens): per token
  // 6 N + 12 L H S, N the learnable parameters but the token embedding, L the blocks, H the hidden size (heads x
  // head dim), S the sequence, the attention counted full (not halved for the causal mask).
  // "graph": any other model: the FLOPs of the graph's forward and backward ops (Op::flops, what the kernels
  // compute), the optimizer left out.
  std::string count;
  int64_t tokens_per_sample = 0;  // S of a token model; 0: a model of images (throughput in samples)
  int64_t tp = 1;                 // the GPUs that share each sample (tensor parallel); throughput per GPU divides by it
};
ModelFlops model_flops(const Graph& training, int64_t tp = 1);

// Within one iteration's span of the trace: `collective_ns`, the time some collective of that iteration runs
// (the union of their kernels' intervals), and `exposed_ns`, the part of it during which no other kernel runs (of
// any iteration: the next forward overlapping this iteration's last collective hides it). Copies are not kernels
// and hide nothing.
struct CommunicationTime {
  TimeNs collective_ns = 0;
  TimeNs exposed_ns = 0;
};
CommunicationTime communication_time(const Graph& g, const Trace& trace, int iteration);

// The GPU's dense peak for the run's math: bf16 or fp16 tensor cores under mixed or pure half precision; TF32
// for fp32 when tf32 is All and the GPU has it; fp32 otherwise.
double dense_peak_flops(const GpuSpec& spec, Precision precision, Tf32 tf32);

// The figures `dlsim run --json` prints for a data-parallel run of `batch` samples per rank, in microseconds and
// per second: communication_time_us, exposed_communication_time_us, tokens_per_s_per_gpu (a token model) or
// images_per_s_per_gpu, model_flops_per_iteration, mfu_flop_count (ModelFlops::count) and mfu (model FLOPs per
// iteration / (iteration time x peak), a fraction; absent without a peak). Nothing but the communication times
// for an iteration of 0 ns (none completed).
nlohmann::json parallel_metrics_json(const ModelFlops& flops, const CommunicationTime& comm, double peak_flops,
                                     int64_t batch, TimeNs iteration_ns);

}  // namespace dlsim
