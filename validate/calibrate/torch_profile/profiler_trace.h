#pragma once
// torch.profiler's trace as `prof.export_chrome_trace` writes it (Chrome's trace format, from Kineto), read for
// `dlsim calibrate --torch-profile` (docs/host.md, "Calibrating the host from your own profile"): an object with
// `traceEvents`, or the list of events alone (Chrome's JSON Array Format, what PyTorch 1.x writes). Only complete
// events (`"ph": "X"`) are kept, by category:
//   cpu_op            an op on the host: aten ops (`aten::conv2d`), autograd's nodes (`autograd::engine::
//                     evaluate_function: ConvolutionBackward0`); args "Input Dims" (record_shapes=True), and where
//                     PyTorch gives them "Sequence number", "Fwd thread id", "External id";
//   user_annotation   record_function spans: `ProfilerStep#N` (one per prof.step()), `Optimizer.step#SGD.step`, ...;
//   cuda_runtime, cuda_driver   the host's CUDA calls: args "correlation" (required of a launch, copy or memset:
//                     cudaLaunchKernel, cuLaunchKernel, cudaMemcpyAsync, ...);
//   kernel, gpu_memcpy, gpu_memset   what ran on the GPU: args "correlation" (the launch that issued it).
// Other categories (python_function, gpu_user_annotation, Trace, ...) and other phases (flows, metadata) are
// skipped. The reader is strict: a file that is not JSON, has no traceEvents, or an event of a kept category with
// a missing or ill-typed field is a ConfigError naming the file and the field (`traceEvents[12].args.Input Dims`);
// a trace whose cpu_op events carry no "Input Dims" at all was recorded without record_shapes, and is refused.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlsim {

enum class ProfileEventKind : uint8_t { CpuOp, Annotation, Runtime, Kernel, Memcpy };

// One input of a cpu_op as "Input Dims" gives it: a tensor's shape, a list of tensors (each shape), or nothing
// (a scalar or another non-tensor argument: []).
struct ProfileInput {
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> list;  // a TensorList input
  bool is_tensor() const { return !shape.empty(); }
};

struct ProfileEvent {
  ProfileEventKind kind = ProfileEventKind::CpuOp;
  size_t index = 0;  // its position in traceEvents (what errors and listings name)
  std::string name;
  double ts_us = 0;   // start, microseconds on the trace's clock
  double dur_us = 0;  // duration, microseconds (>= 0)
  std::string tid;    // the thread (or the GPU stream), as text: Kineto writes numbers and strings
  std::vector<ProfileInput> inputs;         // cpu_op: Input Dims
  std::optional<int64_t> sequence;          // cpu_op: "Sequence number" (autograd's node order)
  std::optional<int64_t> forward_thread;    // cpu_op: "Fwd thread id" (a backward op's forward thread; 0: none)
  std::optional<int64_t> external_id;       // "External id"
  std::optional<int64_t> correlation;       // runtime, kernel, memcpy: "correlation"
  double end_us() const { return ts_us + dur_us; }
};

struct ProfilerTrace {
  std::string file;
  std::vector<ProfileEvent> events;  // the kept events, in file order
  // The top-level "dlsim" object validate/torch/record_profile.py adds: the median step time measured without the
  // profiler (0: absent), and what was recorded (free text, for the report).
  double unprofiled_step_us = 0;
  std::string recorded;
};

// Reads the trace in `text` (`file` names it in errors).
ProfilerTrace profiler_trace_from_text(const std::string& text, const std::string& file);
// Reads the file at `path`: a ConfigError when it cannot be read.
ProfilerTrace load_profiler_trace(const std::string& path);

}  // namespace dlsim
