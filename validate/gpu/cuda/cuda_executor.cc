#include "validate/gpu/cuda/cuda_executor.h"
#include "validate/gpu/cuda/internal/executor.h"

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

const char* to_string(CudnnApi a) { return a == CudnnApi::Graph ? "graph" : "legacy"; }

namespace cuda_internal {

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
  if (cudnn_api_ == CudnnApi::Graph) conv_plans_ = std::make_unique<GraphConvCache>(cudnn_backend(), dnn_);
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
    auto r = std::make_unique<OpRunner>(g_, translate_op(g_, op), dnn_, blas_, conv_plans_.get());
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

bool Executor::eager_iteration(int i, std::vector<std::pair<OpRecord, Span>>& ops,
                               std::vector<std::pair<CopyRecord, Span>>& copies) {
  const bool measured = i >= translation_.warmup;
  const int it = i - translation_.warmup;  // the trace numbers measured iterations from 0
  DLSIM_CK(cudaDeviceSynchronize(), "before iteration " + std::to_string(i));
  Span whole{events_.make(true), events_.make(true)};
  DLSIM_CK(cudaEventRecord(whole.begin, streams_[0]), "iteration start");
  // Every stream starts after the iteration's start event, so the span covers all of them.
  for (size_t s = 1; s < streams_.size(); ++s) DLSIM_CK(cudaStreamWaitEvent(streams_[s], whole.begin, 0), "");
  pool_->iteration_begin(i);
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
  held_.capture_begin();
  DLSIM_CK(cudaStreamBeginCapture(streams_[0], cudaStreamCaptureModeRelaxed), "beginning the capture");
  record(whole.begin, streams_[0], "iteration start");
  for (size_t s = 1; s < streams_.size(); ++s) DLSIM_CK(cudaStreamWaitEvent(streams_[s], whole.begin, 0), "");
  pool_->iteration_begin(translation_.warmup);
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
  // The frees held during the capture end with it, unwaited: their events are graph nodes (held_frees.h).
  held_.capture_end([&](const HeldFrees<FreeMark>::Hold& h) { pool_->deallocate(h.addr); });
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

nlohmann::json Executor::conv_report() const {
  nlohmann::json algos = nlohmann::json::object();
  for (const auto& r : runners_) {
    if (r->workspace_bytes() == 0 && r->algorithm().empty()) continue;
    const Op& op = g_.op(r->translation().op);
    nlohmann::json cands = nlohmann::json::array();
    nlohmann::json a = {{"algorithm", r->algorithm()},
                        {"api", to_string(cudnn_api_)},
                        {"workspace_bytes", r->workspace_bytes()},
                        {"graph_workspace_bytes", op.workspace != kNoTensor ? g_.tensor(op.workspace).bytes : 0},
                        {"signature", op_signature(g_, op)}};
    if (const GraphConvPlan* p = r->graph_plan()) {
      // [source, engine tag, verdict, workspace bytes] per configuration looked at, in order
      for (const EngineTrial& t : p->choice().trials)
        cands.push_back({to_string(t.source), t.tag, to_string(t.verdict), t.workspace});
      a["engine"] = p->engine();
      a["graph"] = p->spec().key();
    } else {
      for (const auto& c : r->candidates()) cands.push_back({c.algo, c.status, c.memory});  // [algo, cudnnStatus_t, bytes]
    }
    a["heuristics"] = cands;  // best first
    algos[op.name] = a;
  }
  return algos;
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
  const nlohmann::json algos = conv_report();
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
                {"timing", graph_ ? "cuda-graph replays" : "eager"}, {"cudnn_api", to_string(cudnn_api_)},
                {"cudnn_version", cudnnGetVersion()}, {"conv_plans", conv_plans_ ? conv_plans_->size() : 0},
                {"conv_algorithms", algos}};
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
  runners_.clear();  // the graph API's plans go before the handle they were built on
  conv_plans_.reset();
  cudnnDestroy(dnn_);
  cublasDestroy(blas_);
  cudaFree(arena_);
  out.trace = std::move(trace_);
  return out;
}

}  // namespace cuda_internal

GpuRun run_plan_on_gpu(const ProgramFile& plan, std::ostream& log, const RunOptions& options) {
  if (options.check && options.cuda_graph)
    throw ConfigError("command line", 0, "--check", "cannot check after every command of a captured iteration");
  cuda_internal::Executor e(plan, log, options);
  return e.run();
}

}  // namespace dlsim::cuda
