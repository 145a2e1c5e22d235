#pragma once
// What a GPU and its host link are, read from configs/hw/*.yaml. Units: bytes, bytes/s, FLOP/s, ns.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/params.h"
#include "hw/collective_model.h"
#include "hw/eager_host_model.h"
#include "hw/fitted/fitted_kernels.h"
#include "workloads/graph.h"

namespace dlsim {

using TimeNs = int64_t;

// The largest device a hardware file may describe (memory.total_mib): 2^25 MiB, 32 TiB.
inline constexpr int64_t kMaxDeviceMib = int64_t{1} << 25;

// The arithmetic units a kernel runs on (hw/math_path.h says which an op takes).
enum class MathPath : uint8_t {
  CudaCore,  // fp32 arithmetic on the CUDA cores (every non-matrix op, and matrix ops without tensor cores)
  Tf32,      // fp32 data on TF32 tensor cores
  Fp16,      // fp16 tensor cores (fp32 accumulate)
  Bf16,      // bf16 tensor cores
};
const char* to_string(MathPath p);  // "cuda-core", "tf32", "fp16", "bf16"

// How kernels share the GPU when streams run them concurrently (sim/device_model.h), the hardware file's optional
// `concurrent_kernels:` block. Every default is an assumption ([A]) until `dlsim calibrate` fits it from the
// concurrent-convolution micro-benchmarks (validate/calibrate/calibrate.h: co_run_slowdown, gemm_blocks_per_sm).
struct ConcurrencySpec {
  // CUDA_DEVICE_MAX_CONNECTIONS: hardware work queues; stream s feeds queue s % max_connections, and the commands
  // of streams sharing a queue run in issue order across them (a false dependency).
  int max_connections = 8;
  // Thread blocks one SM holds at once: for a tensor-core GEMM/convolution tile (128x128, 256 threads, about
  // 100 KB of shared memory for a 3-stage fp32/TF32 pipeline: two fit in an H100 SM's 228 KB) and for an
  // elementwise kernel (128 threads: 16 fill the 2048 threads of an SM).
  int gemm_blocks_per_sm = 2;
  int elementwise_blocks_per_sm = 16;
  // Fraction of the peak HBM bandwidth kernels running together can share; when their demands exceed it the
  // memory-bound ones slow down in proportion.
  double hbm_share_fraction = 0.9;
  // How much each other kernel resident at the same time slows a kernel (L2, instruction issue, memory latency):
  // rate = 1 / (1 + co_run_slowdown * sum over the others of min(1, its share of the slots / this one's)).
  double co_run_slowdown = 0.0;
  // How much a host<->device copy moving data slows every running kernel: rate = 1 / (1 + copy_slowdown * the
  // copy directions moving data at that moment). A copy engine's DMA reads or writes HBM and L2 beside the
  // kernels; on an H200 running swap plans, kernels that overlapped a copy took 6-13 % longer than the same
  // kernels without swapping (eager; the others 0-2 % longer): results/swap/README.md, "On a real GPU".
  double copy_slowdown = 0.0;
  // Launch path under CUDA Graphs (experiment key launch: cuda-graph): one cudaGraphLaunch per iteration, and a
  // small cost per kernel node as the graph's work is fed to the GPU.
  TimeNs graph_launch_ns = 10000;
  TimeNs graph_node_ns = 100;
  // Commands a stream holds queued but not finished before a further launch into it blocks the host (CUDA's
  // launch queue: about a thousand kernels per stream, stackoverflow.com/q/53970187). It bounds how far an
  // eager host runs ahead of the GPU, and so how many cross-stream frees it can hold at once. 0: no bound.
  int launch_queue_depth = 1024;
  bool operator==(const ConcurrencySpec&) const = default;
};

struct GpuSpec {
  std::string name;  // e.g. "h100-sxm" (the file's stem)
  std::string file;  // where it was read from
  std::string description;

  int sms = 0;
  uint64_t memory_bytes = 0;       // device memory capacity usable by the pool (after the CUDA context)
  uint64_t total_memory_bytes = 0; // cudaDeviceProp::totalGlobalMem: memory.total_mib, the context included
  double hbm_bandwidth = 0;        // bytes/s, peak
  double peak_fp32 = 0;            // FLOP/s, non-tensor-core
  // FLOP/s of the tensor cores, dense; 0 when the GPU has no tensor cores for the type (a V100 has fp16 only):
  // hw/math_path.h decides what runs instead.
  double peak_tf32 = 0;
  double peak_bf16 = 0;
  double peak_fp16 = 0;

  // The kernel cost model (hw/cost_model.h's registry) and its parameters, the file's `roofline:` block,
  // checked against the model's specs. kernel_model is what the file names, or by default `table` when it
  // has kernel_times and `roofline` when not; `fitted` when the file's kernel_model is the fitted section.
  std::string kernel_model = "roofline";
  Params kernel_model_params;
  // The fitted per-class kernel times (the `kernel_model:` mapping, hw/fitted/fitted_kernels.h); empty when the
  // file names a model instead.
  FittedKernels fitted_kernels;

  int pcie_gen = 0;
  int pcie_lanes = 0;
  double pcie_h2d_pinned = 0;      // bytes/s achieved, pinned host memory
  double pcie_d2h_pinned = 0;
  double pcie_h2d_pageable = 0;    // bytes/s achieved, pageable host memory
  double pcie_d2h_pageable = 0;
  TimeNs pcie_latency_ns = 0;      // per transfer
  // Per direction, when a file gives them apart (SINGA's fitted lines: 47.2 us out, 9.7 us in); -1: latency_ns.
  TimeNs pcie_h2d_latency_ns = -1;
  TimeNs pcie_d2h_latency_ns = -1;
  int copy_engines = 0;            // async copy engines (1 per direction at least)

  TimeNs launch_overhead_ns = 0;   // host time to issue one kernel
  // The host CPU's optimizer step (`host_cpu: adam_gb_per_s`, optional; 0: not given): fp32 state bytes
  // (master weight and moments) a CPU Adam such as DeepSpeedCPUAdam updates per second. Only ZeRO-Offload's
  // host step (policies/swap/core/host_step.h) uses it.
  double host_adam_bytes_per_s = 0;
  // PyTorch eager mode's per-op host costs (`host_cpu: pytorch_eager:`, optional; hw/eager_host_model.h). Absent:
  // an eager launch costs the host launch_overhead_ns, as before the model existed.
  std::optional<EagerHostSpec> eager_host;
  ConcurrencySpec concurrency;     // the `concurrent_kernels:` block (optional; defaults [A])
  // The links between GPUs and the machine's shape (`interconnect:` and `node:`, optional, the first needing the
  // second; hw/interconnect_file.h). Absent: a single GPU, and a collective op is an error naming the file.
  std::optional<Interconnect> interconnect;
  std::optional<NodeSpec> node;
  TimeNs malloc_base_ns = 0;       // cudaMalloc: base + per GiB
  double malloc_ns_per_gib = 0;
  TimeNs free_base_ns = 0;         // cudaFree: base + per GiB (plus the device synchronisation it implies)
  double free_ns_per_gib = 0;

  // Measured kernel times by op signature (hw/op_signature.h), written by calibration; empty when none.
  std::map<std::string, TimeNs> kernel_times;
  // The same measurements by batch-free signature (hw/batch_signature.h): (batch, value) pairs sorted by batch,
  // for ops measured at another batch. Filled from the `batch_free` and `batch` fields of the table entries.
  std::map<std::string, std::vector<std::pair<int64_t, TimeNs>>> kernel_times_by_batch;
  // The cuDNN workspace each convolution's algorithm really needed on the GPU (bytes, by op signature and by
  // batch-free signature), written by calibration from `dlsim-cuda run --workspace any`; empty when none, and
  // then the graph's assumption (workloads/training.cc) stands.
  std::map<std::string, uint64_t> conv_workspace;
  std::map<std::string, std::vector<std::pair<int64_t, uint64_t>>> conv_workspace_by_batch;
  // cuDNN's scratch per convolution pass measured through PyTorch's allocator, by geometry (hw/conv_scratch.h),
  // from the file's `conv_scratch:` list, keyed by conv_scratch_key; empty when none, and then nothing changes.
  // Serves the zoo's graphs and recorded steps alike.
  struct ConvScratchRecord {
    std::string pass, dtype, layout;
    int64_t c = 1, h = 1, w = 1, k = 1, r = 1, s = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
    int64_t dilation = 1, groups = 1;
    std::vector<std::pair<int64_t, uint64_t>> by_batch;  // (batch, bytes), sorted by batch
  };
  std::map<std::string, ConvScratchRecord> conv_scratch;
  // A convolution whose geometry has no entry takes the median of this many nearest geometries' entries, scaled to
  // it, where it has that many (hw/conv_scratch.h); 0: none, it keeps the graph's own workspace. The file's
  // conv_scratch_neighbours.
  size_t conv_scratch_neighbours = 3;
  // The workspaces PyTorch hands cuBLAS, per handle and stream (hw/cublas_workspace.h), from the file's
  // memory.cublas_workspace_kib and memory.cublaslt_workspace_kib; 0: none (a file that does not say).
  uint64_t cublas_workspace_bytes = 0;
  uint64_t cublaslt_workspace_bytes = 0;
  // Per op kind, measured time over the single-efficiency roofline's (the median over the calibration runs): an
  // op that no table entry serves takes that roofline's time times its kind's factor; a kind without a factor
  // takes the per-class model (hw/roofline.h). Empty: no correction.
  std::map<OpKind, double> op_class_scale;
  // For the convolution and matrix-product kinds among them: the math path their factor was measured on. An op of
  // such a kind on another path (a 16-bit kernel, a TF32 matmul) was not measured: the per-class model serves it.
  std::map<OpKind, MathPath> op_class_scale_path;

};

}  // namespace dlsim
