#pragma once
// The CUDA executor's working state (validate/gpu/cuda/cuda_executor.h is the API): one Executor runs a program
// file on the GPU. Its methods live in three files by concern: cuda_executor.cc (setup, eager and captured
// iterations, the run), cuda_executor_commands.cc (one section of commands on the streams),
// cuda_executor_memory.cc (frees held for other streams, ordering reuse after a freed range's last owner).
#include <algorithm>
#include <chrono>
#include <memory>
#include <random>

#include "common/config_error.h"
#include "common/byte_units.h"
#include "hw/op_signature.h"
#include "policies/pool/pool_policy.h"
#include "program/freed_ranges.h"
#include "validate/gpu/arena_device_memory.h"
#include "validate/gpu/cuda/cuda_check.h"
#include "validate/gpu/cuda/device_info.h"
#include "validate/gpu/held_frees.h"
#include "validate/gpu/cuda/kernels.h"
#include "validate/gpu/cuda/op_runner.h"
#include "validate/gpu/op_translation.h"
#include "validate/gpu/cuda/gpu_run.h"
#include "validate/gpu/program_file.h"

namespace dlsim::cuda::cuda_internal {


// Buffers outside the pool: side buffers for roles the graph does not hold, pinned host copies of swapped tensors.
struct DeviceBuffer {
  void* p = nullptr;
  ~DeviceBuffer() { if (p) cudaFree(p); }
};
struct HostBuffer {
  void* p = nullptr;
  ~HostBuffer() { if (p) cudaFreeHost(p); }
};

struct Events {
  std::vector<cudaEvent_t> ev;
  ~Events() { for (auto e : ev) cudaEventDestroy(e); }
  cudaEvent_t make(bool timing) {
    cudaEvent_t e;
    DLSIM_CK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming), "event pool");
    ev.push_back(e);
    return e;
  }
};

// Events without timing, handed out again once every one of them is known to have completed (after a device
// synchronisation): the events of frees, one per free, without creating one per free per iteration.
struct RecycledEvents {
  Events owned;
  size_t used = 0;
  cudaEvent_t take() { return used < owned.ev.size() ? owned.ev[used++] : (++used, owned.make(false)); }
  void all_done() { used = 0; }
};

// Where a freed range's last owner was: an event recorded on its allocation stream at the free.
struct FreeMark {
  int stream = 0;
  cudaEvent_t event = nullptr;
};

// fill_random's kind for a tensor type: floats as floats, anything else as nonzero random bytes.
inline int fill_kind(DType d) { return d == DType::F32 ? 0 : d == DType::BF16 ? 1 : 2; }

// A timed span on a stream: two events, resolved to ns after the iteration's device synchronisation.
struct Span {
  cudaEvent_t begin, end;
};

class Executor {
 public:
  Executor(const ProgramFile& plan, std::ostream& log, const RunOptions& o)
      : translation_(plan), g_(plan.graph), log_(log), check_(o.check), rule_(o.workspace), graph_(o.cuda_graph),
        cudnn_api_(o.cudnn_api) {}
  GpuRun run();

 private:
  const ProgramFile& translation_;
  const Graph& g_;
  std::ostream& log_;
  bool check_;
  WorkspaceRule rule_;
  bool graph_;
  CudnnApi cudnn_api_;
  bool capturing_ = false;
  std::vector<double> host_launch_ns_;  // by OpId: host time in launch calls over the measured eager iterations
  int host_launch_iterations_ = 0;
  char* arena_ = nullptr;
  std::unique_ptr<ArenaDeviceMemory> mem_;
  std::unique_ptr<PoolPolicy> pool_;
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> prog_events_;
  Events events_;
  cudnnHandle_t dnn_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  std::unique_ptr<GraphConvCache> conv_plans_;      // the graph API's execution plans (null: legacy API)
  std::vector<std::unique_ptr<OpRunner>> runners_;  // by OpId
  std::vector<std::vector<std::vector<std::unique_ptr<DeviceBuffer>>>> side_;  // [op][step][slot] (in then out)
  std::map<TensorId, std::unique_ptr<HostBuffer>> host_;
  std::map<TensorId, int64_t> index_range_;
  std::vector<std::optional<DevPtr>> addr_;  // by TensorId
  // Memory across streams, as the simulator does it (sim/executor.h): frees held for the streams RecordStream
  // named, and the event a stream-blind pool's reuse on another stream waits for. Only with several streams.
  bool multi_stream_ = false;
  std::vector<int16_t> alloc_stream_;          // by TensorId
  std::vector<std::vector<int16_t>> used_on_;  // by TensorId: streams named by RecordStream
  HeldFrees<FreeMark> held_;
  FreedRanges<std::vector<FreeMark>> freed_;
  RecycledEvents free_events_;
  cudaEvent_t base_ = nullptr;
  Trace trace_;
  std::chrono::steady_clock::time_point t0_;
  uint64_t side_bytes_ = 0;

  void* dev(TensorId t, const std::string& ctx) {
    if (!addr_[static_cast<size_t>(t)])
      throw CudaError("tensor " + std::to_string(t) + " '" + g_.tensor(t).name + "' is not allocated (" + ctx + ")");
    return arena_ + *addr_[static_cast<size_t>(t)];
  }
  TimeNs host_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0_).count();
  }
  TimeNs event_ns(cudaEvent_t e) {
    float ms = 0;
    DLSIM_CK(cudaEventElapsedTime(&ms, base_, e), "reading a timing event");
    return static_cast<TimeNs>(static_cast<double>(ms) * 1e6);
  }
  // Said of an out of memory when the arena, not the modelled capacity, refused a request.
  std::string arena_note() const {
    return mem_->arena_fragmentation_failures() > 0
               ? " [the GPU arena refused " + std::to_string(mem_->arena_fragmentation_failures()) +
                     " request(s) that the modelled capacity allowed: a limit of this GPU, not of the model]"
               : "";
  }
  // A timing event: recorded as an external node while the iteration is being captured into a CUDA graph, so
  // that it is recorded again at every replay and can be read after each.
  void record(cudaEvent_t e, cudaStream_t s, const std::string& ctx) {
    DLSIM_CK(capturing_ ? cudaEventRecordWithFlags(e, s, cudaEventRecordExternal) : cudaEventRecord(e, s), ctx);
  }
  cudaEvent_t record_free_event(int stream);
  void release_held(bool wait);  // wait: synchronize on every held free first; else only the completed ones
  void free_memory(TensorId t);
  void order_after_freed(DevPtr addr, uint64_t bytes, int stream);
  void device_synchronized();  // every event has completed: held memory returns, events are reused
  bool eager_iteration(int i, std::vector<std::pair<OpRecord, Span>>& ops,
                       std::vector<std::pair<CopyRecord, Span>>& copies);
  bool graph_iterations();
  void setup_device();
  void prepare_ops();
  nlohmann::json conv_report() const;  // report.json's conv_algorithms: per convolution op, what cuDNN runs
  void fill(TensorId t, cudaStream_t s, uint64_t seed);
  // Runs one command list; returns false on out of memory (the trace says where).
  bool execute(const std::vector<Command>& cmds, int iteration, bool record,
               std::vector<std::pair<OpRecord, Span>>& ops, std::vector<std::pair<CopyRecord, Span>>& copies);
};

}  // namespace dlsim::cuda::cuda_internal
