#include "validate/gpu/cuda/microbench.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "validate/gpu/cuda/cuda_check.h"
#include "validate/gpu/cuda/device_info.h"
#include "validate/gpu/cuda/kernels.h"

namespace dlsim::cuda {

namespace {

using Clock = std::chrono::steady_clock;
double since_ns(Clock::time_point t) { return std::chrono::duration<double, std::nano>(Clock::now() - t).count(); }
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Times `reps` copies of `bytes` in `dir` with CUDA events on stream a; with `both`, the same size runs the other
// way on stream b at the same time (pinned buffers, separate copy engines).
double time_copy(CopyDir dir, bool pinned, bool both, uint64_t bytes, int reps, void* dev_a, void* dev_b,
                 void* host_a, void* host_b, cudaStream_t a, cudaStream_t b) {
  const std::string ctx = "copy benchmark, " + std::to_string(bytes) + " bytes";
  cudaEvent_t e0, e1;
  DLSIM_CK(cudaEventCreate(&e0), ctx);
  DLSIM_CK(cudaEventCreate(&e1), ctx);
  const bool h2d = dir == CopyDir::HostToDevice;
  std::vector<double> ns;
  for (int r = 0; r < reps + 1; ++r) {  // the first is a warm-up
    DLSIM_CK(cudaDeviceSynchronize(), ctx);
    if (both)
      DLSIM_CK(cudaMemcpyAsync(h2d ? host_b : dev_b, h2d ? dev_b : host_b, bytes,
                               h2d ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice, b), ctx);
    // Pageable copies are measured on the host clock: they are partly synchronous by CUDA's rules.
    const auto t = Clock::now();
    DLSIM_CK(cudaEventRecord(e0, a), ctx);
    DLSIM_CK(cudaMemcpyAsync(h2d ? dev_a : host_a, h2d ? host_a : dev_a, bytes,
                             h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, a), ctx);
    DLSIM_CK(cudaEventRecord(e1, a), ctx);
    DLSIM_CK(cudaEventSynchronize(e1), ctx);
    float ms = 0;
    DLSIM_CK(cudaEventElapsedTime(&ms, e0, e1), ctx);
    const double host = since_ns(t);
    if (r > 0) ns.push_back(pinned ? static_cast<double>(ms) * 1e6 : host);
  }
  DLSIM_CK(cudaDeviceSynchronize(), ctx);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return median(ns);
}

void bench_copies(MicrobenchResults& r, bool quick, std::ostream& log) {
  const uint64_t max_bytes = quick ? (64ull << 20) : (1ull << 30);
  void *da, *db, *pa, *pb;
  DLSIM_CK(cudaMalloc(&da, max_bytes), "copy benchmark device buffer");
  DLSIM_CK(cudaMalloc(&db, max_bytes), "copy benchmark device buffer");
  DLSIM_CK(cudaMallocHost(&pa, max_bytes), "copy benchmark pinned buffer");
  DLSIM_CK(cudaMallocHost(&pb, max_bytes), "copy benchmark pinned buffer");
  std::unique_ptr<char[]> ga(new char[max_bytes]);
  std::memset(ga.get(), 1, max_bytes);  // touch the pageable pages so that first-touch faults are not timed
  cudaStream_t a, b;
  DLSIM_CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), "copy benchmark stream");
  DLSIM_CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), "copy benchmark stream");
  for (uint64_t bytes = 4096; bytes <= max_bytes; bytes *= quick ? 16 : 4) {
    const int reps = bytes >= (256ull << 20) ? 5 : quick ? 5 : 20;
    for (CopyDir dir : {CopyDir::HostToDevice, CopyDir::DeviceToHost})
      for (bool pinned : {true, false})
        for (bool both : {false, true}) {
          if (both && !pinned) continue;  // only pinned copies overlap each other
          const double ns = time_copy(dir, pinned, both, bytes, reps, da, db, pinned ? pa : ga.get(), pb, a, b);
          r.copies.push_back({dir, pinned, both, bytes, ns});
        }
    log << "  copies of " << bytes << " bytes done\n";
  }
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
  cudaFree(da);
  cudaFree(db);
  cudaFreeHost(pa);
  cudaFreeHost(pb);
}

void bench_alloc(MicrobenchResults& r, bool quick) {
  for (uint64_t bytes = 1 << 20; bytes <= (quick ? (256ull << 20) : (8ull << 30)); bytes *= 4) {
    std::vector<double> m, f;
    for (int i = 0; i < (quick ? 3 : 10); ++i) {
      void* p = nullptr;
      DLSIM_CK(cudaDeviceSynchronize(), "alloc benchmark");
      auto t = Clock::now();
      DLSIM_CK(cudaMalloc(&p, bytes), "alloc benchmark, " + std::to_string(bytes) + " bytes");
      m.push_back(since_ns(t));
      t = Clock::now();
      DLSIM_CK(cudaFree(p), "alloc benchmark, " + std::to_string(bytes) + " bytes");
      f.push_back(since_ns(t));
    }
    r.allocs.push_back({false, bytes, median(m)});
    r.allocs.push_back({true, bytes, median(f)});
  }
}

void bench_launch(MicrobenchResults& r) {
  cudaStream_t s;
  DLSIM_CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "launch benchmark");
  std::vector<double> per;
  for (int batch = 0; batch < 11; ++batch) {
    DLSIM_CK(cudaStreamSynchronize(s), "launch benchmark");
    const auto t = Clock::now();
    for (int i = 0; i < 1000; ++i) empty_kernel(s, "launch benchmark");
    if (batch > 0) per.push_back(since_ns(t) / 1000.0);  // host time per launch; batch 0 warms up
  }
  DLSIM_CK(cudaStreamSynchronize(s), "launch benchmark");
  cudaStreamDestroy(s);
  r.launch_overhead_ns = median(per);
}

// n independent 3x3 convolutions (ResNet's 14x14x256 stage shape), on one stream and then on n streams.
void bench_concurrency(MicrobenchResults& r, int n, int batch) {
  const int C = 256, H = 14, K = 256;
  const std::string ctx = "concurrency benchmark";
  cudnnHandle_t h;
  DLSIM_CK(cudnnCreate(&h), ctx);
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t cd;
  DLSIM_CK(cudnnCreateTensorDescriptor(&x), ctx);
  DLSIM_CK(cudnnCreateTensorDescriptor(&y), ctx);
  DLSIM_CK(cudnnCreateFilterDescriptor(&w), ctx);
  DLSIM_CK(cudnnCreateConvolutionDescriptor(&cd), ctx);
  DLSIM_CK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, batch, C, H, H), ctx);
  DLSIM_CK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, batch, K, H, H), ctx);
  DLSIM_CK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, 3, 3), ctx);
  DLSIM_CK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT), ctx);
  cudnnConvolutionFwdAlgoPerf_t perf[8];
  int found = 0;
  DLSIM_CK(cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, cd, y, 8, &found, perf), ctx);
  const auto algo = perf[0].algo;
  const size_t ws = perf[0].memory;
  const size_t xb = size_t(batch) * C * H * H * 4, wb = size_t(K) * C * 9 * 4, yb = size_t(batch) * K * H * H * 4;
  std::vector<void*> bufs;
  std::vector<cudaStream_t> streams(static_cast<size_t>(n));
  auto alloc = [&](size_t b) {
    void* p;
    DLSIM_CK(cudaMalloc(&p, std::max<size_t>(b, 256)), ctx);
    fill_random(p, b, false, bufs.size() + 1, nullptr, ctx);
    bufs.push_back(p);
    return p;
  };
  std::vector<void*> X, W, Y, WS;
  for (int i = 0; i < n; ++i) {
    X.push_back(alloc(xb)), W.push_back(alloc(wb)), Y.push_back(alloc(yb)), WS.push_back(alloc(ws));
    DLSIM_CK(cudaStreamCreateWithFlags(&streams[static_cast<size_t>(i)], cudaStreamNonBlocking), ctx);
  }
  const float one = 1, zero = 0;
  // Issues `count` convolutions, on one stream or one stream each (forked from and joined to streams[0]).
  std::vector<cudaEvent_t> evs;
  auto event = [&]() {
    cudaEvent_t e;
    DLSIM_CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), ctx);
    evs.push_back(e);
    return e;
  };
  auto issue = [&](int count, bool parallel) {
    cudaEvent_t fork = event();
    DLSIM_CK(cudaEventRecord(fork, streams[0]), ctx);
    for (int i = 0; i < count; ++i) {
      cudaStream_t s = streams[parallel ? static_cast<size_t>(i) : 0];
      if (i > 0 && parallel) DLSIM_CK(cudaStreamWaitEvent(s, fork, 0), ctx);
      DLSIM_CK(cudnnSetStream(h, s), ctx);
      DLSIM_CK(cudnnConvolutionForward(h, &one, x, X[i], w, W[i], cd, algo, WS[i], ws, &zero, y, Y[i]), ctx);
    }
    for (int i = 1; parallel && i < count; ++i) {
      cudaEvent_t join = event();
      DLSIM_CK(cudaEventRecord(join, streams[static_cast<size_t>(i)]), ctx);
      DLSIM_CK(cudaStreamWaitEvent(streams[0], join, 0), ctx);
    }
  };
  // Eager: issued from the host and timed on its clock, so launch costs count.
  auto eager = [&](bool parallel) {
    std::vector<double> t;
    for (int rep = 0; rep < 11; ++rep) {
      DLSIM_CK(cudaDeviceSynchronize(), ctx);
      const auto t0 = Clock::now();
      issue(n, parallel);
      DLSIM_CK(cudaDeviceSynchronize(), ctx);
      if (rep > 0) t.push_back(since_ns(t0));
    }
    return median(t);
  };
  // Device time: the same work captured once into a CUDA graph and timed over replays with events, so that the
  // host's launch costs (tens of microseconds per cuDNN 9 legacy call) stay out of it.
  auto replayed = [&](int count, bool parallel) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    DLSIM_CK(cudaStreamBeginCapture(streams[0], cudaStreamCaptureModeRelaxed), ctx);
    issue(count, parallel);
    DLSIM_CK(cudaStreamEndCapture(streams[0], &graph), ctx);
    DLSIM_CK(cudaGraphInstantiate(&exec, graph, 0), ctx);
    cudaEvent_t a, b;
    DLSIM_CK(cudaEventCreate(&a), ctx);
    DLSIM_CK(cudaEventCreate(&b), ctx);
    std::vector<double> t;
    for (int rep = 0; rep < 21; ++rep) {
      DLSIM_CK(cudaEventRecord(a, streams[0]), ctx);
      DLSIM_CK(cudaGraphLaunch(exec, streams[0]), ctx);
      DLSIM_CK(cudaEventRecord(b, streams[0]), ctx);
      DLSIM_CK(cudaEventSynchronize(b), ctx);
      float ms = 0;
      DLSIM_CK(cudaEventElapsedTime(&ms, a, b), ctx);
      if (rep > 0) t.push_back(static_cast<double>(ms) * 1e6);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    return median(t);
  };
  ConcurrencySample c;
  c.convs = n;
  c.shape = "n" + std::to_string(batch) + " c256 h14 w14 k256 r3 fp32";
  c.single_ns = replayed(1, false);
  c.serial_ns = replayed(n, false);
  c.parallel_ns = replayed(n, true);
  c.eager_serial_ns = eager(false);
  c.eager_parallel_ns = eager(true);
  r.concurrency.push_back(c);
  for (auto e : evs) cudaEventDestroy(e);
  for (void* p : bufs) cudaFree(p);
  for (auto s : streams) cudaStreamDestroy(s);
  cudnnDestroyTensorDescriptor(x);
  cudnnDestroyTensorDescriptor(y);
  cudnnDestroyFilterDescriptor(w);
  cudnnDestroyConvolutionDescriptor(cd);
  cudnnDestroy(h);
}

}  // namespace

MicrobenchResults run_microbenchmarks(bool quick, std::ostream& log) {
  DLSIM_CK(cudaSetDevice(0), "");
  MicrobenchResults r;
  r.device = device_name(0);
  log << "micro-benchmarks on " << describe_device(0) << "\n";
  bench_launch(r);
  log << "  launch overhead " << r.launch_overhead_ns << " ns\n";
  bench_alloc(r, quick);
  bench_copies(r, quick, log);
  for (int batch : {1, 32})
    for (int n : {2, 3}) bench_concurrency(r, n, batch);
  return r;
}

}  // namespace dlsim::cuda
