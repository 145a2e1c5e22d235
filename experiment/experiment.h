#pragma once
// One experiment: which model, batch and GPU, and which pool, swap and concurrency policies.
// The flat YAML form (see configs/experiments/resnet50-cnmem.yaml) is the stable schema; every other key is
// optional with a stated default.
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/config_error.h"
#include "common/params.h"
#include "parallel/parallel_layout.h"
#include "sim/executor.h"
#include "workloads/training.h"
#include "workloads/zoo.h"

namespace dlsim {

// A policy chosen by name, with its parameters (validated against the registry's specs).
struct PolicyChoice {
  std::string name;
  Params params;
  Params defaults;
  int line = 0;  // where the file chose it (0 when built in code): errors found later still say where
  // "cnmem", or "cnmem(init_size_mb=256)" naming the parameters that differ from their defaults.
  std::string label() const;
  bool non_default() const { return params.values() != defaults.values(); }
};

// Where the first iteration allocates what a PyTorch step makes at first use, the optimizer's state and the cuBLAS
// workspaces (experiment/first_step.h): there (lazy), or before it with the weights (preallocated: every iteration
// the steady state).
enum class FirstStep : uint8_t { Lazy, Preallocated };
const char* to_string(FirstStep f);  // "lazy", "preallocated"
inline constexpr std::array<FirstStep, 2> kFirstSteps = {FirstStep::Lazy, FirstStep::Preallocated};

struct Experiment {
  std::string file;           // where it was read from ("" when built in code)
  std::string model;          // zoo name or path to an .onnx file (a relative one: from the working folder, else
                              // beside the experiment file)
  int64_t batch = 0;
  int64_t image_size = 0;     // 0: the model's default
  int64_t seq_len = 0;        // 0: the model's default
  std::optional<Attention> attention;  // eager or sdpa-flash; nullopt: the model's default (workloads/model_options.h)
  // "llama3-8b", or "llama3-8b(attention=eager)" when the attention is chosen: the runs.csv model column, so that
  // a sweep over attention gives rows of distinct keys without a column older results lack.
  std::string model_label() const;
  std::string hw;             // configs/hw name or path to a .yaml file (relative: as for model)
  YAML::Node hw_override;     // a mapping merged into the hardware file (hw/hardware.h); null: none
  // The hardware file the simulation runs on, when not `hw` (empty): the graph, schedule and swap plan are made
  // for `hw` and run unchanged on this one (hw_override merged into both).
  std::string run_hw;
  // "h100-sxm", or "h100-sxm+pcie.h2d_pinned_gb_per_s=25" naming every override exactly (experiment/hw_override_label.h)
  std::string hw_label() const;
  PolicyChoice pool;
  PolicyChoice swap;
  PolicyChoice concurrency;
  // The data-parallel layout this GPU is one rank of (experiment/parallel_section.h); the plain run by default.
  // `batch` is per rank.
  parallel::ParallelLayout parallel;
  int iterations = 3;
  Optimizer optimizer = Optimizer::SgdMomentum;
  double weight_decay = 0;  // SGD's L2 decay (workloads/training_options.h); 0: none, PyTorch's default
  Precision precision = Precision::FP32;
  Tf32 tf32 = Tf32::Conv;
  MemoryFormat memory_format = MemoryFormat::NCHW;
  Kernels kernels = Kernels::Eager;
  // Set in code only: how an eager Adam step runs per parameter (workloads/training_options.h). PyTorch's foreach
  // passes by default; dlsim validate sets PerParameter, the one fused kernel the GPU harness runs for it.
  EagerAdam eager_adam = EagerAdam::Foreach;
  // Set in code only: whether cross entropy's backward holds nll_loss_backward's gradient (PyTorch's two kernels,
  // the default); dlsim validate clears it, the harness's one fused kernel (workloads/training_options.h).
  bool nll_grad_workspace = true;
  LaunchMode launch = LaunchMode::Eager;  // eager launches, or one CUDA Graph per iteration (sim/executor.h)
  bool sync_every_step = false;  // the host waits for the GPU after each iteration (SimOptions::sync_every_iteration)
  // nullopt: lazy for a one-GPU eager run on pytorch-caching without a swap policy, else preallocated
  // (lazy_first_step in experiment/first_step.h)
  std::optional<FirstStep> first_step;
  int64_t max_graph_nodes = kDefaultMaxGraphNodes;  // an ONNX model's limit on nodes (workloads/model_options.h)
  // Set in code only (dlsim calibrate --published tries fitted efficiencies): kernel-model parameters that replace
  // the hardware file's `roofline:` values.
  std::map<std::string, ParamValue> kernel_model_overrides;
};

// The keys an experiment mapping may hold.
const std::vector<std::string>& experiment_keys();

Experiment load_experiment(const std::string& path);
// Parses a mapping (a whole file, or one point of a sweep). Every error names file, line and key.
Experiment experiment_from_yaml(const YAML::Node& map, const std::string& file);
// How the experiment's training graph is synthesised (optimizer, precision, TF32, memory format, kernels): the
// one mapping from experiment keys to TrainingOptions, for the zoo's models and for other forward graphs alike.
TrainingOptions training_options(const Experiment& e);
// The message for an error in the hardware file at a key an experiment's hw_override does not set but made wrong
// (a total_mib below the file's context_reserve_mib): the key is the file's, not one the user wrote, so it is
// named as such beside the message ("with this override, configs/hw/x.yaml's memory.context_reserve_mib: ...").
std::string hardware_error_under_override(const ConfigError& err);

}  // namespace dlsim
