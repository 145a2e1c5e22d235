#include "experiment/experiment.h"

#include <array>
#include <variant>
#include <filesystem>

#include "common/config_error.h"
#include "common/strings.h"
#include "common/yaml_reader.h"
#include "experiment/hw_override_label.h"
#include "experiment/parallel_precision.h"
#include "experiment/parallel_section.h"
#include "hw/gpu_spec_file.h"
#include "hw/hardware.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/pool/pool_policy.h"
#include "policies/swap/core/swap_policy.h"
#include "workloads/torch_step.h"
#include "workloads/zoo.h"

namespace dlsim {

namespace {

// A parameter's value in a label: a text that holds a label's separators (a file name such as checkmate's
// model_file may) in double quotes, so that two choices never share a label (sweep keys are labels).
std::string label_value(const ParamValue& v) {
  std::string text = to_string(v);
  if (!std::holds_alternative<std::string>(v) || text.find_first_of(",=()\"\\") == std::string::npos) return text;
  std::string q = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

}  // namespace

std::string PolicyChoice::label() const {
  std::string diff;
  for (const auto& [k, v] : params.values()) {
    auto it = defaults.values().find(k);
    if (it != defaults.values().end() && it->second == v) continue;
    diff += (diff.empty() ? "" : ",") + k + "=" + label_value(v);
  }
  return diff.empty() ? name : name + "(" + diff + ")";
}

const std::vector<std::string>& experiment_keys() {
  static const std::vector<std::string> keys = {"model",         "batch",   "hw",        "hw_override",
                                                "pool",          "swap",    "concurrency", "iterations",
                                                "image_size",    "seq_len", "optimizer", "precision",
                                                "tf32",          "memory_format", "kernels",
                                                "launch",        "max_graph_nodes", "attention",
                                                "sync_every_step", "run_hw", "parallel", "first_step",
                                                "weight_decay"};
  return keys;
}

const char* to_string(FirstStep f) { return f == FirstStep::Lazy ? "lazy" : "preallocated"; }

std::string Experiment::model_label() const {
  return attention ? model + "(attention=" + to_string(*attention) + ")" : model;
}

std::string Experiment::hw_label() const {
  const std::string o = hw_override_label(hw_override);
  return o.empty() ? hw : hw + "+" + o;
}

namespace {

// A relative path to a file (an ONNX model, a hardware file) as written in `file`: as given when it exists from
// the working folder, else beside `file` when it exists there.
std::string beside_if_missing(const std::string& path, const std::string& file) {
  const std::filesystem::path p(path);
  if (p.is_absolute() || file.empty() || std::filesystem::exists(p)) return path;
  const auto beside = std::filesystem::path(file).parent_path() / p;
  return std::filesystem::exists(beside) ? beside.string() : path;
}

// A hardware file named by `key`: a shipped name or a path (relative as beside_if_missing), which must exist.
std::string read_hw_file(const YamlMap& m, const std::string& key, const std::string& file) {
  std::string hw = m.get_string(key);
  if (!is_hw_path(hw)) {
    auto names = list_hw_names();
    if (std::find(names.begin(), names.end(), hw) == names.end())
      m.fail(key, "unknown hardware '" + hw + "'; valid: " + join(names) + ", or " + kHwPathText);
  } else {
    hw = beside_if_missing(hw, file);
    if (!std::filesystem::exists(hw)) m.fail(key, "hardware file '" + hw + "' not found");
    if (std::filesystem::is_directory(hw)) m.fail(key, "'" + hw + "' is a folder, not a hardware file");
  }
  return hw;
}

// Every key of an override mapping, at any depth, is a name: the merge into the hardware file goes by name, and a
// list or a mapping in a key's place would otherwise become an empty key the hardware reader calls unknown.
void check_override_keys(const YAML::Node& n, const std::string& file, const std::string& path) {
  if (!n.IsMap()) return;
  for (const auto& kv : n) check_override_keys(kv.second, file, path + "." + yaml_key(kv.first, file, path));
}

// `pool: cnmem` or `pool: {name: cnmem, init_size_mb: 256}`.
template <class Reg>
PolicyChoice read_policy(const YamlMap& m, const std::string& key, const Reg& reg) {
  YAML::Node n = m.get(key);
  PolicyChoice c;
  YAML::Node params_node;
  if (n.IsScalar()) {
    c.name = n.Scalar();
  } else if (n.IsMap()) {
    YamlMap sub(n, m.file(), key);
    c.name = sub.get_string("name");
    params_node = n;
  } else {
    m.fail(key, "expected a " + reg.kind() + " name or a mapping {name: ..., <parameter>: ...}");
  }
  const auto& entry = reg.get(c.name, m.file(), m.line_of(key), key);
  c.params = params_from_yaml(entry.params, params_node, m.file(), c.name, key);
  c.defaults = Params(entry.params);
  c.line = m.line_of(key);
  return c;
}

// An enum option by the name to_string gives its values (`precision: mixed-fp16`), or its default when absent.
template <class E, size_t N>
E read_choice(const YamlMap& m, const std::string& key, E fallback, const std::array<E, N>& values) {
  if (!m.has(key)) return fallback;
  const std::string v = m.get_string(key);
  if (auto e = choice_named(v, values)) return *e;
  m.fail(key, "unknown " + key + " '" + v + "'; valid: " + choice_names(values));
}

// A recorded step fixes its batch and numerics: read now, so that a bad file or a batch it was not recorded at
// fails before anything runs, and a setting that would be ignored is named at its line.
void check_recorded_step(const YamlMap& m, const Experiment& e) {
  const TorchStepFile step = read_torch_step(e.model);  // its own errors name the trace file and record
  if (step.batch != e.batch)
    m.fail("batch", "'" + e.model + "' was recorded at batch " + std::to_string(step.batch) + " (record another with "
                    "dlsim import-torch --batch " + std::to_string(e.batch) + ")");
  for (const char* key : {"optimizer", "precision", "kernels", "weight_decay"})
    if (m.has(key))
      m.fail(key, "'" + e.model + "' is a recorded PyTorch step (optimizer " + step.optimizer +
                      (step.weight_decay ? ", weight decay " + significant(*step.weight_decay) : std::string()) +
                      ", precision " + step.precision + "): its " + key + " is the recording's; record another step "
                      "with dlsim import-torch to change it (--optimizer, --weight-decay, --precision)");
}

}  // namespace

std::string hardware_error_under_override(const ConfigError& err) {
  if (err.key().empty()) return std::string("with this override, ") + err.what();
  return "with this override, " + (err.file().empty() ? std::string("the hardware file") : err.file()) + "'s " + err.key() +
         ": " + err.message();
}

TrainingOptions training_options(const Experiment& e) {
  TrainingOptions t;
  t.optimizer = e.optimizer;
  t.precision = compute_precision(e.precision, e.parallel);  // bf16 under FSDP's bf16 param_dtype
  t.tf32 = e.tf32;
  t.memory_format = e.memory_format;
  t.kernels = e.kernels;
  t.eager_adam = e.eager_adam;
  t.weight_decay = e.weight_decay;
  t.nll_grad_workspace = e.nll_grad_workspace;
  return t;
}

Experiment experiment_from_yaml(const YAML::Node& node, const std::string& file) {
  YamlMap m(node, file);
  m.check_keys(experiment_keys());
  Experiment e;
  e.file = file;

  e.model = m.get_string("model");
  const bool is_onnx = e.model.size() > 5 && e.model.substr(e.model.size() - 5) == ".onnx";
  const bool is_config = e.model.size() > 5 && e.model.substr(e.model.size() - 5) == ".json";
  const bool is_step = is_torch_step_path(e.model);
  if (is_onnx || is_config) {
    e.model = beside_if_missing(e.model, file);
    if (!std::filesystem::exists(e.model))
      m.fail("model", std::string(is_onnx ? "ONNX file '" : is_step ? "recorded step '" : "model config '") + e.model +
                          "' not found");
    if (std::filesystem::is_directory(e.model)) m.fail("model", "'" + e.model + "' is a folder, not a file");
  } else {
    try {
      model_settings(e.model);  // an unknown name: the error lists the zoo and the paths a model may be
    } catch (const ConfigError& err) {
      m.fail("model", err.message());
    }
  }

  e.batch = m.get_int("batch");
  if (e.batch <= 0) m.fail("batch", "must be a positive integer");
  if (is_step) check_recorded_step(m, e);
  e.image_size = m.get_int("image_size", 0);
  if (e.image_size < 0) m.fail("image_size", "must be positive (or 0 for the model's default)");
  e.seq_len = m.get_int("seq_len", 0);
  if (e.seq_len < 0) m.fail("seq_len", "must be positive (or 0 for the model's default)");

  e.hw = read_hw_file(m, "hw", file);
  // The plan (graph, schedule, swaps) is made for `hw`; the simulation may run it on another GPU's file, as a
  // plan made for one GPU runs on another in the harness (results/swap/README.md, "On a real GPU").
  if (m.has("run_hw")) e.run_hw = read_hw_file(m, "run_hw", file);

  if (m.has("hw_override")) {  // merged into the hardware file and checked now, so that a sweep fails early
    e.hw_override = m.get("hw_override");
    if (!e.hw_override.IsMap()) m.fail("hw_override", "expected a mapping of hardware-file keys, e.g. {pcie: {latency_us: 10}}");
    check_override_keys(e.hw_override, file, "hw_override");
    try {
      load_hardware(e.hw, e.hw_override);
    } catch (const ConfigError& err) {
      // The line of the overriding value when the error is about one; else the mapping's, and the hardware
      // file's key that the override made wrong is named as the file's, not as a key the user wrote.
      const YAML::Node at = yaml_find_path(e.hw_override, err.key());
      if (at) {
        const int line = yaml_line(at) > 0 ? yaml_line(at) : m.line_of("hw_override");
        throw ConfigError(file, line, "hw_override." + err.key(), err.message());
      }
      throw ConfigError(file, m.line_of("hw_override"), "hw_override", hardware_error_under_override(err));
    }
  }

  if (!e.run_hw.empty()) load_hardware(e.run_hw, e.hw_override);  // its errors now, not mid-sweep

  e.pool = read_policy(m, "pool", pool_registry());
  e.swap = read_policy(m, "swap", swap_registry());
  e.concurrency = read_policy(m, "concurrency", concurrency_registry());
  e.parallel = read_parallel_section(m);

  const int64_t iters = m.get_int("iterations", 3);
  if (iters < 1 || iters > 1000) m.fail("iterations", "must be between 1 and 1000");
  e.iterations = static_cast<int>(iters);

  e.optimizer = read_choice(m, "optimizer", Optimizer::SgdMomentum, kOptimizers);
  e.weight_decay = m.get_double("weight_decay", 0.0);
  if (!(e.weight_decay >= 0 && e.weight_decay < 1))
    m.fail("weight_decay", "must be in [0, 1), got " + significant(e.weight_decay));
  if (e.weight_decay > 0 && e.optimizer != Optimizer::SgdMomentum)
    m.fail("weight_decay", "is SGD's L2 decay (optimizer: sgd-momentum); dlsim's AdamW decays its parameters "
                           "itself and its Adam has none");
  e.precision = read_choice(m, "precision", Precision::FP32, kPrecisions);
  check_parallel_precision(m, e.precision, e.parallel);
  e.tf32 = read_choice(m, "tf32", Tf32::Conv, kTf32Modes);
  e.memory_format = read_choice(m, "memory_format", MemoryFormat::NCHW, kMemoryFormats);
  e.kernels = read_choice(m, "kernels", Kernels::Eager, kKernelChoices);
  e.launch = read_choice(m, "launch", LaunchMode::Eager, kLaunchModes);
  e.sync_every_step = m.get_bool("sync_every_step", false);
  if (m.has("first_step")) {
    e.first_step = read_choice(m, "first_step", FirstStep::Preallocated, kFirstSteps);
    // The lazy first step is PyTorch's eager step on one GPU (a tensor a swap plan moves keeps the plan's first
    // residency): a rank's sharded state is the layout's, and a CUDA graph is captured only after eager warm-up steps.
    if (*e.first_step == FirstStep::Lazy) {
      if (e.pool.name != "pytorch-caching")  // a pool that plans from iteration 0 (planned, smartpool) would plan this one
        m.fail("first_step", "lazy is PyTorch's first step: it needs pool: pytorch-caching (pool: " + e.pool.name + ")");
      if (!e.parallel.is_single()) m.fail("first_step", "lazy is for a run on one GPU, without a parallel: section");
      if (e.launch != LaunchMode::Eager) m.fail("first_step", "lazy is for launch: eager (a CUDA graph is captured after warm-up steps)");
    }
  }
  if (m.has("attention")) e.attention = read_choice(m, "attention", Attention::SdpaFlash, kAttentionChoices);
  e.max_graph_nodes = m.get_int("max_graph_nodes", kDefaultMaxGraphNodes);
  if (e.max_graph_nodes < 1) m.fail("max_graph_nodes", "must be at least 1, got " + std::to_string(e.max_graph_nodes));
  // A setting the model does not read (seq_len on a CNN, image_size on a transformer, attention on a CNN or an
  // ONNX file, sdpa-flash on BERT, nhwc on a model without convolutions) would be ignored without a word: named
  // here, at its line. The builder checks the same (workloads/zoo.h) for `dlsim model`.
  ModelOptions settings;
  settings.image_size = e.image_size;
  settings.seq_len = e.seq_len;
  settings.attention = e.attention;
  settings.training = training_options(e);
  settings.max_graph_nodes = e.max_graph_nodes;
  settings.tp = e.parallel.tp;  // tensor parallelism on a model built whole: named at the parallel: section
  settings.sequence_parallel = e.parallel.sequence_parallel;
  settings.tp_across_nodes = e.parallel.tp_across_nodes;
  try {
    check_model_settings(e.model, settings);
  } catch (const ConfigError& err) {
    if (err.key() == "tp" || err.key() == "sequence_parallel" || err.key() == "tp_across_nodes")
      throw ConfigError(e.file, e.parallel.line, "parallel." + err.key(), err.message());
    m.fail(err.key(), err.message());
  }
  return e;
}

Experiment load_experiment(const std::string& path) {
  YAML::Node n = load_yaml_file(path);
  return experiment_from_yaml(n, path);
}

}  // namespace dlsim
