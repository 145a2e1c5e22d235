#pragma once
// Which cuDNN engine configuration runs a convolution, chosen as PyTorch 2.x does with cudnn.benchmark off
// (aten/src/ATen/native/cudnn/Conv_v8.cpp: get_configs_from_heuristics, filterEngineConfigs, try_configs; read
// and described here, not copied):
//   1. ask the heuristics (instant mode) for the operation graph's engine configurations, best first;
//   2. drop those whose numerical notes say they down-convert their inputs (always), run on tensor cores (only
//      when they are not allowed: fp32 with allow_tf32 off) or are nondeterministic (only when determinism is
//      asked for; PyTorch's default is not);
//   3. take the first of the rest whose execution plan finalizes and whose workspace can be had: PyTorch
//      allocates it from its caching allocator and moves on when that fails, the harness compares it with the
//      workspace the op may use (the graph's workspace tensor, or no limit);
//   4. only when no configuration of step 1 is taken, do the same with the fallback list (cuDNN's fallback
//      heuristics mode).
// PyTorch also runs the plan once before caching it (a failing run moves on) and skips plans named in an errata
// file (none by default); the harness builds its plans before it has operands, so it only finalizes them.
//
// Pure logic over callbacks, so that it is tested without a GPU; the cuDNN side is validate/gpu/cuda/.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dlsim {

// One engine configuration as offered by cuDNN, with the numerical notes the choice reads.
struct EngineOffer {
  std::string tag;                   // engine index and knob choices, e.g. "eng34_k2=1_k3=0" (cudnn_frontend's form)
  bool tensor_core = false;          // CUDNN_NUMERICAL_NOTE_TENSOR_CORE
  bool down_convert_inputs = false;  // CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS
  bool nondeterministic = false;     // CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC
};

enum class EngineSource : uint8_t { Heuristics, Fallback };
enum class EngineVerdict : uint8_t {
  Chosen,
  DownConvertsInputs,     // filtered: the engine converts its inputs to a narrower type
  TensorCoresNotAllowed,  // filtered: fp32 without TF32
  Nondeterministic,       // filtered: determinism asked for
  NotSupported,           // its execution plan did not finalize
  WorkspaceTooLarge,      // finalized, but wants more workspace than the op may use
};
const char* to_string(EngineSource s);   // "heuristics", "fallback"
const char* to_string(EngineVerdict v);  // "chosen", "down-converts-inputs", ...

struct EngineChoicePolicy {
  bool allow_tensor_cores = true;
  bool deterministic = false;
  uint64_t workspace_limit = UINT64_MAX;
};

// What finalizing one configuration's execution plan gave.
struct PlanAttempt {
  bool finalized = false;
  uint64_t workspace = 0;  // bytes, when finalized
  std::string detail;      // why not, when it did not finalize (cuDNN's status)
};

struct EngineTrial {
  EngineSource source = EngineSource::Heuristics;
  std::string tag;
  EngineVerdict verdict = EngineVerdict::NotSupported;
  uint64_t workspace = 0;
  std::string detail;
};

struct EngineChoice {
  std::optional<size_t> chosen;     // index into trials
  std::vector<EngineTrial> trials;  // every configuration looked at, in order
  const EngineTrial* choice() const { return chosen ? &trials[*chosen] : nullptr; }
};

// `offers(source)`: that source's configurations, best first (the fallback list is asked for only when the
// heuristics' give nothing). `try_plan(source, i)`: finalizes the plan of offers(source)[i]. The choice stops at
// the first plan it takes, so that plan is the last one try_plan built.
EngineChoice choose_engine(const EngineChoicePolicy& policy,
                           const std::function<std::vector<EngineOffer>(EngineSource)>& offers,
                           const std::function<PlanAttempt(EngineSource, size_t)>& try_plan);

}  // namespace dlsim
