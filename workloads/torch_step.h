#pragma once
// A recorded PyTorch training step (`dlsim import-torch`, frontend/torch/): the trace file's records, read and
// checked. The format is documented in docs/torch-step.md; workloads/torch_step_graph.h turns the records into a
// training Graph. Every mistake in a file (not JSON, another format or version, a truncated file, a field missing
// or of the wrong type, a reference out of range) is a ConfigError naming the file, the record and the field
// ("ops[12].inputs[0].shape").
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlsim {

inline constexpr const char* kTorchStepFormat = "dlsim-torch-step";
inline constexpr int64_t kTorchStepVersion = 1;
// What a trace file's name ends with: how an experiment's `model:` tells it from a config.json.
inline constexpr const char* kTorchStepSuffix = ".torchstep.json";
bool is_torch_step_path(const std::string& path);

// A tensor as an op reads or writes it: a view of a storage.
struct TorchStepView {
  int64_t storage = 0;
  std::string dtype;  // torch's name: float32, bfloat16, int64, ...
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;
  int64_t offset = 0;
  std::string arg;      // an input's argument name in the op's schema ("weight", "tensors[3]")
  int64_t result = -1;  // an output's position among the op's results
};

// A block of memory: what a tensor of dlsim's graph is. allocated_at / freed_at: the op during which it was
// allocated, the first op that ran after it was freed (none: alive before / after the step).
struct TorchStepStorage {
  int64_t id = 0;
  uint64_t bytes = 0;
  std::string kind;  // parameter, buffer, gradient, optimizer_state, input, constant, activation
  std::string name;  // "" for an activation
  std::optional<int64_t> allocated_at, freed_at, grad_of;
  bool host = false;  // host memory in a GPU run (a foreach Adam's step counts): not the device's
};

// An integer or a list of integers among an op's other arguments (stride, padding, dim, ...).
struct TorchStepArg {
  std::string name;
  std::vector<int64_t> ints;  // an integer is a list of one; a bool is 0 or 1
  bool is_list = false;
  std::optional<double> number;  // a floating-point argument (dropout's p)
};

struct TorchStepOp {
  int64_t id = 0;
  std::string name;   // aten::convolution
  std::string phase;  // forward, backward, optimizer
  std::string module;  // the innermost module running it, "" when none
  int64_t block = -1;
  bool inplace = false, view = false, recompute = false;
  std::vector<TorchStepView> inputs, outputs;
  std::vector<TorchStepArg> args;  // the integer, boolean and floating-point ones
  const TorchStepArg* arg(const std::string& name) const;
};

// What autograd saved for the backward pass: the storage, and the ops that saved and used it.
struct TorchStepSaved {
  int64_t storage = 0;
  std::optional<int64_t> saved_by, used_by;
};

struct TorchStepFile {
  std::string file;
  std::string spec, model, precision, optimizer;
  int64_t batch = 0;
  // The optimizer's weight_decay as recorded (import-torch --weight-decay); absent from recordings made before it.
  std::optional<double> weight_decay;
  std::vector<std::string> blocks;
  std::vector<TorchStepStorage> storages;
  std::vector<TorchStepOp> ops;
  std::vector<TorchStepSaved> saved;
  // PyTorch's own count of the recorded step (the file's summary).
  uint64_t parameters = 0, saved_for_backward_bytes = 0, peak_live_bytes = 0;
};

// Reads a trace file. More than `max_ops` ops (when > 0) is a ConfigError naming `ops`: the bound on the work one
// file can cause (max_graph_nodes, docs/using.md#limits).
TorchStepFile read_torch_step(const std::string& path, int64_t max_ops = 0);
// The same from text already in memory; `name` names it in errors.
TorchStepFile parse_torch_step(const std::string& text, const std::string& name, int64_t max_ops = 0);

}  // namespace dlsim
