#include "validate/gpu/cuda/cuda_executor.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>

#include "common/config_error.h"
#include "hw/op_signature.h"
#include "policies/pool/pool_policy.h"
#include "program/freed_ranges.h"
#include "validate/gpu/arena_device_memory.h"
#include "validate/gpu/cuda/cuda_check.h"
#include "validate/gpu/cuda/device_info.h"
#include "validate/gpu/cuda/kernels.h"
#include "validate/gpu/cuda/op_runner.h"
#include "validate/gpu/op_translation.h"

namespace dlsim::cuda {

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

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
int fill_kind(DType d) { return d == DType::F32 ? 0 : d == DType::BF16 ? 1 : 2; }

// A timed span on a stream: two events, resolved to ns after the iteration's device synchronisation.
struct Span {
  cudaEvent_t begin, end;
};

class Executor {
 public:
  Executor(const ProgramFile& plan, std::ostream& log, const RunOptions& o)
      : translation_(plan), g_(plan.graph), log_(log), check_(o.check), rule_(o.workspace), graph_(o.cuda_graph) {}
  GpuRun run();

 private:
  const ProgramFile& translation_;
  const Graph& g_;
  std::ostream& log_;
  bool check_;
  WorkspaceRule rule_;
  bool graph_;
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
  std::vector<std::unique_ptr<OpRunner>> runners_;  // by OpId
  std::vector<std::vector<std::vector<std::unique_ptr<DeviceBuffer>>>> side_;  // [op][step][slot] (in then out)
  std::map<TensorId, std::unique_ptr<HostBuffer>> host_;
  std::map<TensorId, int64_t> index_range_;
  std::vector<std::optional<DevPtr>> addr_;  // by TensorId
  // Memory across streams, as the simulator does it (sim/executor.h): frees held for the streams RecordStream
  // named, and the event a stream-blind pool's reuse on another stream waits for. Only with several streams.
  struct HeldFree {
    DevPtr addr = 0;
    uint64_t bytes = 0;
    std::vector<FreeMark> marks;  // the allocation stream's first
  };
  bool multi_stream_ = false;
  std::vector<int16_t> alloc_stream_;          // by TensorId
  std::vector<std::vector<int16_t>> used_on_;  // by TensorId: streams named by RecordStream
  std::vector<HeldFree> held_;
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
  bool held_free_done(const HeldFree& h);
  void release_held(bool wait);  // wait: synchronize on every held free first; else only the completed ones
  void free_memory(TensorId t);
  void order_after_freed(DevPtr addr, uint64_t bytes, int stream);
  void device_synchronized();  // every event has completed: held memory returns, events are reused
  bool eager_iteration(int i, std::vector<std::pair<OpRecord, Span>>& ops,
                       std::vector<std::pair<CopyRecord, Span>>& copies);
  bool graph_iterations();
  void setup_device();
  void prepare_ops();
  void fill(TensorId t, cudaStream_t s, uint64_t seed);
  // Runs one command list; returns false on out of memory (the trace says where).
  bool execute(const std::vector<Command>& cmds, int iteration, bool record,
               std::vector<std::pair<OpRecord, Span>>& ops, std::vector<std::pair<CopyRecord, Span>>& copies);
};

void Executor::setup_device() {
  DLSIM_CK(cudaSetDevice(0), "");
  trace_.backend = "cuda";
  trace_.device = device_name(0);
  size_t free_b = 0, total_b = 0;
  DLSIM_CK(cudaMemGetInfo(&free_b, &total_b), "");
  // The arena: the modelled capacity plus a quarter of slack for the arena's own fragmentation, leaving 1 GiB to
  // cuDNN, cuBLAS and the side buffers.
  const uint64_t cap = translation_.capacity_bytes;
  const uint64_t room = free_b > 1024 * kMiB ? free_b - 1024 * kMiB : 0;
  const uint64_t arena = std::min<uint64_t>(room, cap + cap / 4);
  if (arena < 64 * kMiB)
    throw CudaError("only " + std::to_string(free_b / kMiB) + " MiB of the GPU's memory are free: too little for an arena");
  if (arena < cap)
    log_ << "dlsim-cuda: note: the arena (" << arena / kMiB << " MiB) is smaller than the modelled capacity ("
         << cap / kMiB << " MiB); a request beyond it fails as an arena failure, reported apart from out of memory\n";
  DLSIM_CK(cudaMalloc(reinterpret_cast<void**>(&arena_), arena), "the arena of " + std::to_string(arena) + " bytes");
  mem_ = std::make_unique<ArenaDeviceMemory>(arena, cap, translation_.total_global_mem_bytes);
  // The pool, by name and parameters, exactly as the simulator builds it (defaults for unnamed parameters).
  const auto& entry = pool_registry().get(translation_.pool, translation_.experiment, 0, "pool");
  Params params(entry.params);
  for (const auto& [k, v] : translation_.pool_params.values()) params.set(k, v);
  pool_ = entry.factory(params, *mem_);
  for (int i = 0; i < translation_.program.num_streams; ++i) {
    cudaStream_t s;
    DLSIM_CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream " + std::to_string(i));
    streams_.push_back(s);
  }
  for (int i = 0; i < translation_.program.num_events; ++i) prog_events_.push_back(events_.make(false));
  DLSIM_CK(cudnnCreate(&dnn_), "");
  DLSIM_CK(cublasCreate(&blas_), "");
  DLSIM_CK(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH), "");  // PyTorch's default: no TF32 for matmuls
  base_ = events_.make(true);
  addr_.assign(g_.tensors().size(), std::nullopt);
  multi_stream_ = translation_.program.num_streams > 1;
  alloc_stream_.assign(g_.tensors().size(), 0);
  used_on_.assign(g_.tensors().size(), {});
  host_launch_ns_.assign(g_.ops().size(), 0.0);
  index_range_ = index_ranges(g_);
}

void Executor::prepare_ops() {
  runners_.resize(g_.ops().size());
  side_.resize(g_.ops().size());
  uint64_t seed = 1;
  for (const Op& op : g_.ops()) {
    auto r = std::make_unique<OpRunner>(g_, translate_op(g_, op), dnn_, blas_);
    // The graph's workspace tensor bounds the algorithm; without one (or under WorkspaceRule::Any), any workspace,
    // allocated through the pool.
    r->prepare(op.workspace != kNoTensor && rule_ == WorkspaceRule::Graph ? g_.tensor(op.workspace).bytes : UINT64_MAX);
    auto& sides = side_[static_cast<size_t>(op.id)];
    for (const KernelStep& st : r->translation().steps) {
      sides.emplace_back();
      for (const auto* list : {&st.args.in, &st.args.out})
        for (const Arg& a : *list) {
          auto b = std::make_unique<DeviceBuffer>();
          if (a.id == kNoTensor) {
            const std::string ctx = "side buffer of op " + std::to_string(op.id);
            DLSIM_CK(cudaMalloc(&b->p, std::max<uint64_t>(a.bytes, 512)), ctx);
            // Index roles must be valid indices (class targets; a max pool's argmax within its plane); other
            // side buffers hold random values of their type.
            if (a.dtype == DType::I64) {
              const bool pool = st.call == KernelCall::Pool2dForward || st.call == KernelCall::Pool2dBackward;
              const int64_t range = pool ? r->translation().pool.h * r->translation().pool.w : st.cols;
              fill_random_indices(b->p, static_cast<int64_t>(a.bytes / 8), range, seed++, streams_[0], ctx);
            } else {
              fill_random(b->p, a.bytes, fill_kind(a.dtype), seed++, streams_[0], ctx);
            }
            side_bytes_ += a.bytes;
          }
          sides.back().push_back(std::move(b));
        }
    }
    runners_[static_cast<size_t>(op.id)] = std::move(r);
  }
  // Pinned host buffers for every tensor the Program copies, filled with random bytes.
  std::mt19937_64 rng(42);
  for (const auto* list : {&translation_.program.setup, &translation_.program.iteration, &translation_.program.teardown})
    for (const Command& c : *list)
      if ((c.kind == CmdKind::CopyIn || c.kind == CmdKind::CopyOut) && !host_.count(c.tensor)) {
        auto h = std::make_unique<HostBuffer>();
        const uint64_t bytes = g_.tensor(c.tensor).bytes;
        DLSIM_CK(cudaMallocHost(&h->p, bytes), "pinned host buffer of tensor '" + g_.tensor(c.tensor).name + "'");
        auto* w = static_cast<uint64_t*>(h->p);
        for (uint64_t i = 0; i < bytes / 8; ++i) w[i] = rng() | 1;
        host_.emplace(c.tensor, std::move(h));
      }
  DLSIM_CK(cudaDeviceSynchronize(), "after preparing ops");
}

void Executor::fill(TensorId t, cudaStream_t s, uint64_t seed) {
  const Tensor& x = g_.tensor(t);
  const std::string ctx = "random fill of tensor '" + x.name + "'";
  auto it = index_range_.find(t);
  if (it != index_range_.end()) fill_random_indices(dev(t, ctx), static_cast<int64_t>(x.bytes / 8), it->second, seed, s, ctx);
  else fill_random(dev(t, ctx), x.bytes, fill_kind(x.dtype), seed, s, ctx);
}

bool Executor::execute(const std::vector<Command>& cmds, int iteration, bool record,
                       std::vector<std::pair<OpRecord, Span>>& ops, std::vector<std::pair<CopyRecord, Span>>& copies) {
  for (const Command& c : cmds) {
    cudaStream_t s = streams_[static_cast<size_t>(c.stream)];
    switch (c.kind) {
      case CmdKind::HostCompute:
        throw CudaError("host_compute of op '" + g_.op(c.op).name +
                        "': the harness has no CPU optimizer step yet (ZeRO-Offload plans run on the simulator only)");
      case CmdKind::Alloc: {
        const Tensor& t = g_.tensor(c.tensor);
        release_held(false);
        auto p = pool_->allocate({t.bytes, c.stream});
        if (!p && !held_.empty() && !capturing_) {  // PyTorch's synchronize_and_free_events, then once more
          release_held(true);
          p = pool_->allocate({t.bytes, c.stream});
        }
        if (!p) {
          trace_.oom = true;
          trace_.oom_where = "iteration " + std::to_string(iteration) + ", alloc of tensor '" + t.name + "' (" +
                             std::to_string(t.bytes) + " bytes)" + arena_note();
          return false;
        }
        if (multi_stream_) order_after_freed(*p, t.bytes, c.stream);
        addr_[static_cast<size_t>(t.id)] = *p;
        alloc_stream_[static_cast<size_t>(t.id)] = c.stream;
        used_on_[static_cast<size_t>(t.id)].clear();
        if (record)
          trace_.mem.push_back({iteration, host_ns(), MemAction::Alloc, t.id, *p, t.bytes, mem_->reserved()});
        // Weights, optimizer state and inputs start random (never zeros); activations are written by their ops.
        if (t.persistent || t.kind == TensorKind::Input) fill(t.id, s, 1000 + static_cast<uint64_t>(t.id));
        break;
      }
      case CmdKind::Free: {
        const Tensor& t = g_.tensor(c.tensor);
        auto& a = addr_[static_cast<size_t>(t.id)];
        if (!a) throw CudaError("free of tensor '" + t.name + "' that is not allocated");
        if (record) trace_.mem.push_back({iteration, host_ns(), MemAction::Free, t.id, *a, t.bytes, mem_->reserved()});
        free_memory(t.id);
        a.reset();
        break;
      }
      case CmdKind::RecordStream: {
        const auto ti = static_cast<size_t>(c.tensor);
        if (!addr_[ti]) throw CudaError("record_stream of tensor '" + g_.tensor(c.tensor).name + "' that is not allocated");
        auto& on = used_on_[ti];
        if (c.stream != alloc_stream_[ti] && std::find(on.begin(), on.end(), c.stream) == on.end()) on.push_back(c.stream);
        break;
      }
      case CmdKind::Launch: {
        OpRunner& r = *runners_[static_cast<size_t>(c.op)];
        const Op& op = g_.op(c.op);
        const std::string ctx = "op " + std::to_string(op.id) + " '" + op.name + "'";
        // A workspace the graph does not hold comes from the pool right before the op and goes right after.
        std::optional<DevPtr> own_ws;
        void* ws = nullptr;
        if (op.workspace != kNoTensor && rule_ == WorkspaceRule::Graph) {
          if (g_.tensor(op.workspace).bytes > 0) ws = dev(op.workspace, ctx);  // 0 bytes: never allocated
        }
        else if (r.workspace_bytes() > 0) {
          own_ws = pool_->allocate({r.workspace_bytes(), c.stream});
          if (!own_ws) {
            trace_.oom = true;
            trace_.oom_where = "iteration " + std::to_string(iteration) + ", workspace of " + ctx + arena_note();
            return false;
          }
          ws = arena_ + *own_ws;
        }
        const auto& sides = side_[static_cast<size_t>(op.id)];
        const OpTranslation& kp = r.translation();
        auto resolve = [&](size_t step, bool out, size_t slot) -> void* {
          const KernelArgs& args = kp.steps[step].args;
          const Arg& a = out ? args.out.at(slot) : args.in.at(slot);
          if (a.id == kNoTensor) return sides[step][out ? args.in.size() + slot : slot]->p;
          return dev(a.id, ctx);
        };
        Span sp{};
        if (record) {
          sp = {events_.make(true), events_.make(true)};
          this->record(sp.begin, s, ctx);
        }
        const auto h0 = std::chrono::steady_clock::now();
        r.launch(s, resolve, ws);
        if (iteration >= 0 && !capturing_)
          host_launch_ns_[static_cast<size_t>(op.id)] +=
              std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - h0).count();
        if (record) {
          this->record(sp.end, s, ctx);
          ops.push_back({OpRecord{iteration, op.id, c.stream, 0, 0}, sp});
        }
        if (own_ws) pool_->deallocate(*own_ws);
        break;
      }
      case CmdKind::CopyOut: case CmdKind::CopyIn: {
        const Tensor& t = g_.tensor(c.tensor);
        const bool out = c.kind == CmdKind::CopyOut;
        const std::string ctx = std::string(out ? "copy out" : "copy in") + " of tensor '" + t.name + "'";
        void* h = host_.at(t.id)->p;
        void* d = dev(t.id, ctx);
        Span sp{};
        if (record) {
          sp = {events_.make(true), events_.make(true)};
          this->record(sp.begin, s, ctx);
        }
        DLSIM_CK(cudaMemcpyAsync(out ? h : d, out ? d : h, t.bytes, out ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice, s), ctx);
        if (record) {
          this->record(sp.end, s, ctx);
          copies.push_back({CopyRecord{iteration, t.id, out, t.bytes, 0, 0, c.stream}, sp});
        }
        break;
      }
      case CmdKind::RecordEvent:
        DLSIM_CK(cudaEventRecord(prog_events_[static_cast<size_t>(c.event)], s), "program event " + std::to_string(c.event));
        break;
      case CmdKind::WaitEvent:
        DLSIM_CK(cudaStreamWaitEvent(s, prog_events_[static_cast<size_t>(c.event)], 0), "program event " + std::to_string(c.event));
        break;
      case CmdKind::SyncEvent:
        DLSIM_CK(cudaEventSynchronize(prog_events_[static_cast<size_t>(c.event)]), "program event " + std::to_string(c.event));
        break;
    }
    if (check_) {
      const std::string what = "check after command " + std::to_string(static_cast<int>(c.kind)) + " (op " +
                               (c.op >= 0 ? std::to_string(c.op) + " '" + g_.op(c.op).name + "'" : std::string("-")) +
                               ", tensor " + (c.tensor >= 0 ? "'" + g_.tensor(c.tensor).name + "'" : std::string("-")) +
                               ", iteration " + std::to_string(iteration) + ")";
      DLSIM_CK(cudaStreamSynchronize(s), what);
      DLSIM_CK(cudaGetLastError(), what);
    }
  }
  return true;
}

cudaEvent_t Executor::record_free_event(int stream) {
  cudaEvent_t e = free_events_.take();
  DLSIM_CK(cudaEventRecord(e, streams_[static_cast<size_t>(stream)]), "free event on stream " + std::to_string(stream));
  return e;
}

bool Executor::held_free_done(const HeldFree& h) {
  for (size_t i = 1; i < h.marks.size(); ++i) {
    const cudaError_t q = cudaEventQuery(h.marks[i].event);
    if (q == cudaErrorNotReady) return false;
    DLSIM_CK(q, "querying a held free's event");
  }
  return true;
}

// PyTorch's process_events at every allocation (nothing while a capture is under way: captured events cannot be
// queried; the memory then returns after the capture).
void Executor::release_held(bool wait) {
  if (capturing_) return;
  size_t kept = 0;
  for (size_t i = 0; i < held_.size(); ++i) {
    HeldFree& h = held_[i];
    if (wait)
      for (const FreeMark& m : h.marks) DLSIM_CK(cudaEventSynchronize(m.event), "waiting for a held free's event");
    if (wait || held_free_done(h)) {
      pool_->deallocate(h.addr);
      freed_.add(h.addr, h.bytes, h.marks);
    } else if (kept++ != i) {
      held_[kept - 1] = std::move(h);  // never onto itself: that empties the waits
    }
  }
  held_.resize(kept);
}

void Executor::free_memory(TensorId t) {
  const auto ti = static_cast<size_t>(t);
  const DevPtr addr = *addr_[ti];
  if (!multi_stream_) {
    pool_->deallocate(addr);
    return;
  }
  HeldFree h{addr, g_.tensor(t).bytes, {{alloc_stream_[ti], record_free_event(alloc_stream_[ti])}}};
  for (int16_t u : used_on_[ti]) h.marks.push_back({u, record_free_event(u)});
  used_on_[ti].clear();
  if (h.marks.size() > 1 && pool_->holds_frees_for_other_streams()) {
    held_.push_back(std::move(h));
    return;
  }
  pool_->deallocate(addr);
  freed_.add(h.addr, h.bytes, h.marks);
}

void Executor::order_after_freed(DevPtr addr, uint64_t bytes, int stream) {
  freed_.take(addr, bytes, [&](const std::vector<FreeMark>& marks) {
    for (const FreeMark& m : marks)
      if (m.stream != stream)
        DLSIM_CK(cudaStreamWaitEvent(streams_[static_cast<size_t>(stream)], m.event, 0), "ordering a reuse after a free");
  });
}

void Executor::device_synchronized() {
  release_held(true);
  freed_.clear();
  free_events_.all_done();
}

bool Executor::eager_iteration(int i, std::vector<std::pair<OpRecord, Span>>& ops,
                               std::vector<std::pair<CopyRecord, Span>>& copies) {
  const bool measured = i >= translation_.warmup;
  const int it = i - translation_.warmup;  // the trace numbers measured iterations from 0
  DLSIM_CK(cudaDeviceSynchronize(), "before iteration " + std::to_string(i));
  Span whole{events_.make(true), events_.make(true)};
  DLSIM_CK(cudaEventRecord(whole.begin, streams_[0]), "iteration start");
  // Every stream starts after the iteration's start event, so the span covers all of them.
  for (size_t s = 1; s < streams_.size(); ++s) DLSIM_CK(cudaStreamWaitEvent(streams_[s], whole.begin, 0), "");
  const bool ok = execute(translation_.program.iteration, measured ? it : -2, measured, ops, copies);
  for (size_t s = 1; s < streams_.size(); ++s) {
    cudaEvent_t e = events_.make(false);
    DLSIM_CK(cudaEventRecord(e, streams_[s]), "iteration end");
    DLSIM_CK(cudaStreamWaitEvent(streams_[0], e, 0), "iteration end");
  }
  DLSIM_CK(cudaEventRecord(whole.end, streams_[0]), "iteration end");
  DLSIM_CK(cudaDeviceSynchronize(), "after iteration " + std::to_string(i));
  device_synchronized();
  pool_->iteration_end(i);
  if (measured && ok) {
    trace_.iterations.push_back({event_ns(whole.begin), event_ns(whole.end)});
    ++host_launch_iterations_;
  }
  return ok;
}

// The measured iterations as replays of one captured iteration: the host issues nothing while they run, so the
// per-op spans are device time alone (eager spans include the host's own launch time where it is the slower:
// cuDNN 9's legacy calls cost tens of microseconds each, more than many of the kernels they launch). The pool
// serves the captured iteration once, on the host, during the capture; replays reuse its addresses.
bool Executor::graph_iterations() {
  for (const Command& c : translation_.program.iteration)
    if (c.kind == CmdKind::SyncEvent)
      throw CudaError("--cuda-graph: the program makes the host wait on an event (a swap schedule); a captured "
                      "iteration cannot do that");
  DLSIM_CK(cudaDeviceSynchronize(), "before the capture");
  std::vector<std::pair<OpRecord, Span>> gops;
  std::vector<std::pair<CopyRecord, Span>> gcopies;
  Span whole{events_.make(true), events_.make(true)};
  capturing_ = true;
  DLSIM_CK(cudaStreamBeginCapture(streams_[0], cudaStreamCaptureModeRelaxed), "beginning the capture");
  record(whole.begin, streams_[0], "iteration start");
  for (size_t s = 1; s < streams_.size(); ++s) DLSIM_CK(cudaStreamWaitEvent(streams_[s], whole.begin, 0), "");
  const bool ok = execute(translation_.program.iteration, 0, true, gops, gcopies);
  for (size_t s = 1; s < streams_.size(); ++s) {
    cudaEvent_t e = events_.make(false);
    DLSIM_CK(cudaEventRecord(e, streams_[s]), "iteration end");
    DLSIM_CK(cudaStreamWaitEvent(streams_[0], e, 0), "iteration end");
  }
  record(whole.end, streams_[0], "iteration end");
  cudaGraph_t graph = nullptr;
  DLSIM_CK(cudaStreamEndCapture(streams_[0], &graph), "ending the capture");
  capturing_ = false;
  DLSIM_CK(cudaDeviceSynchronize(), "after the capture");
  device_synchronized();
  pool_->iteration_end(translation_.warmup);
  if (!ok) {
    cudaGraphDestroy(graph);
    return false;
  }
  cudaGraphExec_t exec = nullptr;
  DLSIM_CK(cudaGraphInstantiate(&exec, graph, 0), "instantiating the captured iteration");
  for (int it = 0; it < translation_.iterations; ++it) {
    DLSIM_CK(cudaGraphLaunch(exec, streams_[0]), "replay " + std::to_string(it));
    DLSIM_CK(cudaStreamSynchronize(streams_[0]), "replay " + std::to_string(it));
    trace_.iterations.push_back({event_ns(whole.begin), event_ns(whole.end)});
    for (auto [rec, sp] : gops) {
      rec.iteration = it, rec.start = event_ns(sp.begin), rec.end = event_ns(sp.end);
      trace_.ops.push_back(rec);
    }
    for (auto [rec, sp] : gcopies) {
      rec.iteration = it, rec.start = event_ns(sp.begin), rec.end = event_ns(sp.end);
      trace_.copies.push_back(rec);
    }
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return true;
}

GpuRun Executor::run() {
  setup_device();
  prepare_ops();
  log_ << "dlsim-cuda: " << trace_.device << ", arena " << mem_->arena_bytes() / kMiB << " MiB, capacity "
       << mem_->capacity() / kMiB << " MiB, pool " << translation_.pool << ", " << g_.ops().size() << " ops\n";
  t0_ = std::chrono::steady_clock::now();
  DLSIM_CK(cudaEventRecord(base_, streams_[0]), "base event");
  std::vector<std::pair<OpRecord, Span>> ops;
  std::vector<std::pair<CopyRecord, Span>> copies;
  bool ok = execute(translation_.program.setup, -1, true, ops, copies);
  if (graph_) {
    for (int i = 0; ok && i < translation_.warmup; ++i) ok = eager_iteration(i, ops, copies);
    if (ok) ok = graph_iterations();
  } else {
    for (int i = 0; ok && i < translation_.warmup + translation_.iterations; ++i) ok = eager_iteration(i, ops, copies);
  }
  if (ok) ok = execute(translation_.program.teardown, translation_.iterations, true, ops, copies);
  DLSIM_CK(cudaDeviceSynchronize(), "after the run");
  for (auto& [rec, sp] : ops) {
    rec.start = event_ns(sp.begin), rec.end = event_ns(sp.end);
    trace_.ops.push_back(rec);
  }
  for (auto& [rec, sp] : copies) {
    rec.start = event_ns(sp.begin), rec.end = event_ns(sp.end);
    trace_.copies.push_back(rec);
  }
  nlohmann::json algos = nlohmann::json::object();
  for (const auto& r : runners_)
    if (r->workspace_bytes() > 0 || !r->algorithm().empty()) {
      const Op& op = g_.op(r->translation().op);
      nlohmann::json cands = nlohmann::json::array();
      for (const auto& c : r->candidates()) cands.push_back({c.algo, c.status, c.memory});
      algos[op.name] = {{"algorithm", r->algorithm()},
                        {"workspace_bytes", r->workspace_bytes()},
                        {"graph_workspace_bytes", op.workspace != kNoTensor ? g_.tensor(op.workspace).bytes : 0},
                        {"signature", op_signature(g_, op)},
                        {"heuristics", cands}};  // [algo, cudnnStatus_t, workspace bytes], best first
    }
  const PoolStats& ps = pool_->stats();
  GpuRun out;
  out.report = {{"device", trace_.device}, {"pool", translation_.pool}, {"pool_report", pool_->report()},
                {"peak_reserved_bytes", mem_->peak_reserved()}, {"peak_live_bytes", ps.peak_allocated_bytes},
                {"peak_requested_bytes", ps.peak_requested_bytes}, {"arena_bytes", mem_->arena_bytes()},
                {"arena_high_water_bytes", mem_->high_water_mark()},
                {"arena_fragmentation_failures", mem_->arena_fragmentation_failures()},
                {"device_malloc_calls", mem_->malloc_calls()}, {"side_buffer_bytes", side_bytes_},
                {"warmup", translation_.warmup}, {"iterations", translation_.iterations},
                {"workspace_rule", rule_ == WorkspaceRule::Graph ? "graph" : "any"},
                {"timing", graph_ ? "cuda-graph replays" : "eager"}, {"conv_algorithms", algos}};
  if (host_launch_iterations_ > 0) {
    // Host time inside the launch calls, per measured eager iteration: where it exceeds an op's device time, the
    // op's span (and the iteration) measure the host, not the GPU.
    double total = 0;
    std::map<std::string, double> by_kind;
    for (size_t i = 0; i < host_launch_ns_.size(); ++i) {
      const double v = host_launch_ns_[i] / host_launch_iterations_;
      total += v;
      by_kind[to_string(g_.ops()[i].kind)] += v;
    }
    out.report["host_launch_ns_per_iteration"] = total;
    out.report["host_launch_ns_per_iteration_by_kind"] = by_kind;
  }
  for (cudaStream_t s : streams_) cudaStreamDestroy(s);
  cudnnDestroy(dnn_);
  cublasDestroy(blas_);
  runners_.clear();
  cudaFree(arena_);
  out.trace = std::move(trace_);
  return out;
}

}  // namespace

GpuRun run_plan_on_gpu(const ProgramFile& plan, std::ostream& log, const RunOptions& options) {
  if (options.check && options.cuda_graph)
    throw ConfigError("command line", 0, "--check", "cannot check after every command of a captured iteration");
  Executor e(plan, log, options);
  return e.run();
}

}  // namespace dlsim::cuda
