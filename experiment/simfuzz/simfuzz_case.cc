#include "experiment/simfuzz/simfuzz_case.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/config_error.h"
#include "common/yaml_reader.h"
#include "hw/gpu_spec_file.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/pool/pool_policy.h"
#include "policies/swap/core/swap_policy.h"
#include "workloads/model_builder.h"

namespace dlsim {

uint64_t FuzzRandom::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int64_t FuzzRandom::uniform(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int64_t>(span == 0 ? next() : next() % span);
}

double FuzzRandom::unit() { return static_cast<double>(next() >> 11) * 0x1p-53; }

double FuzzRandom::log_uniform(double lo, double hi) {
  return std::exp(std::log(lo) + unit() * (std::log(hi) - std::log(lo)));
}

FuzzCase::FuzzCase(const FuzzCase& o)
    : seed(o.seed),
      input(o.input),
      input_dims(o.input_dims),
      classes(o.classes),
      layers(o.layers),
      experiment(YAML::Clone(o.experiment)) {}

FuzzCase& FuzzCase::operator=(const FuzzCase& o) {
  if (this == &o) return *this;
  seed = o.seed;
  input = o.input;
  input_dims = o.input_dims;
  classes = o.classes;
  layers = o.layers;
  experiment.reset(YAML::Clone(o.experiment));  // rebinds this handle; never writes into a shared tree
  return *this;
}

FuzzCase& FuzzCase::operator=(FuzzCase&& o) noexcept {
  seed = o.seed;
  input = std::move(o.input);
  input_dims = std::move(o.input_dims);
  classes = o.classes;
  layers = std::move(o.layers);
  experiment.reset(o.experiment);
  return *this;
}

const std::vector<std::string>& fuzz_layer_kinds() {
  static const std::vector<std::string> kinds = {"conv", "conv_s2", "bn",      "relu",   "gelu",    "dropout",
                                                 "maxpool", "gap",   "flatten", "linear", "layernorm", "softmax",
                                                 "add",  "mul",     "concat",  "attn",   "branch"};
  return kinds;
}

namespace {

// The largest activation a layer may make (elements, batch included): 2^28, 1 GiB in fp32. Graphs span tensors
// from a few bytes to this; far larger ones only make every run an out-of-memory.
constexpr int64_t kMaxFuzzElems = int64_t{1} << 28;

// Work caps for parameters that only say how long a search runs (the genetic search's population and
// generations, the simulations fastest-under-limit may ask for, the optimal planner's time limit): their whole
// declared range is valid, but drawing from it would make single runs take minutes without reaching code
// that smaller values do not.
double work_cap(const std::string& name) {
  if (name == "population") return 12;
  if (name == "generations") return 6;
  if (name == "simulations") return 12;
  if (name == "time_limit_s") return 0.02;
  if (name == "max_ops") return 60;  // checkmate: CBC's root LP of a larger MILP runs for minutes whatever its limit
  if (name == "coarse_nodes") return 12;  // checkmate's coarse graph, likewise
  if (name == "solver_nodes") return 50;
  return 0;
}

YAML::Node draw_param(const ParamSpec& s, FuzzRandom& r) {
  const ParamCheck& c = s.check;
  if (s.type == ParamType::Bool) return YAML::Node(r.chance(0.5));
  if (s.type == ParamType::String) {
    if (!c.choices().empty()) return YAML::Node(r.pick(c.choices()));
    return YAML::Node();  // free text (a planner name without a list): keep the default
  }
  const bool is_int = s.type == ParamType::Int;
  double def = is_int ? static_cast<double>(std::get<int64_t>(s.default_value)) : std::get<double>(s.default_value);
  double lo = c.lower().value_or(is_int ? 0.0 : 0.0);
  double hi = c.upper().value_or(std::max({1e3, std::fabs(def) * 1000.0}));
  if (const double cap = work_cap(s.name); cap > 0) {
    // The default too: checkmate's 60 s drawn as `def` made a tenth of its cases run two CBC solves of up to a
    // minute each (a 2,000-case run took over ten minutes instead of 20 s).
    hi = std::min(hi, cap);
    def = std::min(def, hi);
  }
  for (int attempt = 0; attempt < 12; ++attempt) {
    double v;
    const double u = r.unit();
    if (u < 0.12) v = lo;
    else if (u < 0.24) v = hi;
    else if (u < 0.34) v = 0;
    else if (u < 0.44) v = def;
    else if (u < 0.54) v = lo + r.unit() * (hi - lo);
    else v = r.log_uniform(std::max(lo, is_int ? 1.0 : 1e-6), std::max(hi, is_int ? 1.0 : 1e-6));
    if (attempt > 0 && u < 0.24) v = (u < 0.12) ? std::nextafter(lo, hi) : std::nextafter(hi, lo);
    if (is_int) {
      v = std::round(v);
      if (attempt > 0 && u < 0.24) v = (u < 0.12) ? std::ceil(lo + 0.5) : std::floor(hi - 0.5);
      if (!(std::fabs(v) < 9e18)) continue;
      const ParamValue pv = static_cast<int64_t>(v);
      if (!c.violation(pv)) return YAML::Node(static_cast<int64_t>(v));
    } else {
      if (!c.violation(ParamValue(v))) return YAML::Node(v);
    }
  }
  return YAML::Node();  // nothing valid drawn: the default
}

// A policy from `reg`, with about half its parameters drawn: a name, or {name, params...}.
template <class Reg>
YAML::Node draw_policy(const Reg& reg, FuzzRandom& r, const std::string& skip = "") {
  std::vector<const typename Reg::Entry*> entries;
  for (const auto& e : reg.entries())
    if (e.name != skip) entries.push_back(&e);
  const auto& e = *r.pick(entries);
  YAML::Node m(YAML::NodeType::Map);
  m["name"] = e.name;
  for (const ParamSpec& s : e.params) {
    if (!r.chance(0.5)) continue;
    YAML::Node v = draw_param(s, r);
    if (v.IsDefined() && !v.IsNull()) m[s.name] = v;
  }
  if (m.size() == 1) return YAML::Node(e.name);
  return m;
}

// A value drawn mostly from what real machines have, sometimes from the ends of what the file format accepts.
double draw_rate(FuzzRandom& r, double lo, double hi, double extreme_lo, double extreme_hi) {
  if (r.chance(0.04)) return r.chance(0.5) ? extreme_lo : extreme_hi;
  return r.log_uniform(lo, hi);
}

// A text for a table's signature: mostly the characters real signatures hold, sometimes the ones a sweep key
// must quote (",", "=", quotes, brackets, a line break), so that two drawn tables differ in the key exactly when
// they differ (experiment/hw_override_label.h).
std::string draw_signature(FuzzRandom& r, size_t index) {
  static const std::string plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-[];=, ";
  static const std::string odd = ",=\"'[]{}~\\#:&*!|>%@`";  // printable: a name holds no control character
  const std::string& from = r.chance(0.3) ? odd : plain;
  std::string sig;
  const auto n = r.uniform(1, 24);
  for (int64_t i = 0; i < n; ++i) sig += from[static_cast<size_t>(r.uniform(0, static_cast<int64_t>(from.size()) - 1))];
  return sig + "#" + std::to_string(index);  // distinct within a table: the reader refuses a repeated signature
}

// A hardware file's measured table (kernel_times, conv_workspace): a list whose every element is part of the
// experiment's key; a sweep once wrote each list as "..." and swapped the rows of two points that differed in one.
YAML::Node draw_table(FuzzRandom& r, const char* value_key, int64_t lo, int64_t hi) {
  YAML::Node list(YAML::NodeType::Sequence);
  const auto n = r.uniform(0, 3);
  for (int64_t i = 0; i < n; ++i) {
    YAML::Node e(YAML::NodeType::Map);
    e["signature"] = draw_signature(r, static_cast<size_t>(i));
    e[value_key] = static_cast<int64_t>(r.log_uniform(static_cast<double>(lo), static_cast<double>(hi)));
    if (r.chance(0.3)) {
      e["batch_free"] = draw_signature(r, static_cast<size_t>(i));
      e["batch"] = r.uniform(1, 256);
    }
    list.push_back(e);
  }
  return list;
}

YAML::Node draw_hw_override(FuzzRandom& r) {
  YAML::Node o(YAML::NodeType::Map);
  if (r.chance(0.7)) {
    const auto total = static_cast<int64_t>(r.chance(0.03) ? double(int64_t{1} << 32) : r.log_uniform(1, 200000));
    o["memory"]["total_mib"] = total;
    o["memory"]["context_reserve_mib"] = r.chance(0.5) ? int64_t{0} : r.uniform(0, std::min<int64_t>(total - 1, 4096));
  }
  if (r.chance(0.2)) o["hbm_bandwidth_gb_per_s"] = draw_rate(r, 1, 1e5, 1e-9, 1e9);
  if (r.chance(0.1)) o["peak_tflops"]["fp32"] = draw_rate(r, 0.01, 1e4, 1e-9, 1e9);
  if (r.chance(0.1)) o["sms"] = r.uniform(1, 200);
  if (r.chance(0.25)) {
    o["pcie"]["h2d_pinned_gb_per_s"] = draw_rate(r, 0.1, 1000, 1e-9, 1e9);
    o["pcie"]["d2h_pinned_gb_per_s"] = draw_rate(r, 0.1, 1000, 1e-9, 1e9);
    o["pcie"]["latency_us"] = draw_rate(r, 0.01, 1e4, 0, 1e12);
    if (r.chance(0.5)) o["pcie"]["h2d_latency_us"] = draw_rate(r, 0.01, 1e4, 0, 1e12);
    if (r.chance(0.5)) o["pcie"]["d2h_latency_us"] = draw_rate(r, 0.01, 1e4, 0, 1e12);
  }
  if (r.chance(0.2)) o["copy_engines"] = r.uniform(1, 4);
  if (r.chance(0.2)) o["launch_overhead_us"] = draw_rate(r, 0.01, 1e4, 0, 1e12);
  if (r.chance(0.15)) o["roofline"]["kernel_fixed_us"] = draw_rate(r, 0.01, 1e4, 0, 1e12);
  for (const char* k : {"cudamalloc", "cudafree"})
    if (r.chance(0.1)) {
      o[k]["base_us"] = draw_rate(r, 0.1, 1e5, 0, 1e12);
      o[k]["us_per_gib"] = draw_rate(r, 0.1, 1e5, 0, 1e12);
    }
  // The CPU's Adam rate of the host step (zero-offload, param-offload), down to the slowest the file accepts.
  if (r.chance(0.1)) o["host_cpu"]["adam_gb_per_s"] = draw_rate(r, 0.1, 1000, 1e-3, 1e6);
  if (r.chance(0.1)) o["kernel_times"] = draw_table(r, "ns", 1, 10000000);
  if (r.chance(0.05)) o["conv_workspace"] = draw_table(r, "bytes", 1, 1000000000);
  return o;
}

FuzzLayer draw_layer(FuzzRandom& r) {
  FuzzLayer l;
  l.kind = r.pick(fuzz_layer_kinds());
  if (l.kind == "conv" || l.kind == "conv_s2") {
    l.a = static_cast<int64_t>(r.log_uniform(1, 512));
    l.b = r.pick(std::vector<int64_t>{1, 3, 5, 7});
  } else if (l.kind == "linear") {
    l.a = static_cast<int64_t>(r.log_uniform(1, 8192));
  } else if (l.kind == "relu") {
    l.a = r.uniform(0, 1);  // 1: in place
  } else if (l.kind == "add" || l.kind == "mul" || l.kind == "concat" || l.kind == "branch") {
    l.a = r.uniform(1, 6);
  }
  return l;
}

}  // namespace

FuzzCase generate_fuzz_case(uint64_t seed) {
  FuzzRandom r(seed);
  FuzzCase c;
  c.seed = seed;
  c.input = r.pick(std::vector<std::string>{"cnn", "mlp", "seq"});
  if (c.input == "cnn") {
    const auto hw = static_cast<int64_t>(r.log_uniform(1, 160));
    c.input_dims = {r.pick(std::vector<int64_t>{1, 3, 16, 64}), hw, r.chance(0.8) ? hw : r.uniform(1, 160)};
  } else if (c.input == "mlp") {
    c.input_dims = {static_cast<int64_t>(r.log_uniform(1, 65536))};
  } else {
    c.input_dims = {static_cast<int64_t>(r.log_uniform(1, 512)), static_cast<int64_t>(r.log_uniform(1, 1024))};
  }
  c.classes = static_cast<int64_t>(r.log_uniform(2, 2000));
  const int64_t n = r.chance(0.1) ? r.uniform(40, 120) : r.uniform(0, 30);
  for (int64_t i = 0; i < n; ++i) c.layers.push_back(draw_layer(r));

  YAML::Node e(YAML::NodeType::Map);
  e["batch"] = static_cast<int64_t>(r.log_uniform(1, 256));
  e["hw"] = r.pick(list_hw_names());
  YAML::Node o = draw_hw_override(r);
  if (o.size() > 0) e["hw_override"] = o;
  e["pool"] = draw_policy(pool_registry(), r);
  // Half the cases swap: the other half exercise pools and schedules without the swap machinery.
  e["swap"] = r.chance(0.5) ? YAML::Node("none") : draw_policy(swap_registry(), r, "none");
  // A limit so small that the target rounds to a byte or less: it must read as missed, never as met.
  if (e["swap"].IsMap() && e["swap"]["limit_fraction"] && r.chance(0.25))
    e["swap"]["limit_fraction"] = r.chance(0.2) ? std::nextafter(0.0, 1.0) : r.log_uniform(1e-300, 1e-6);
  else if (e["swap"].IsScalar() && e["swap"].Scalar() != "none" && r.chance(0.1)) {
    const auto& params = swap_registry().get(e["swap"].Scalar()).params;
    if (std::any_of(params.begin(), params.end(), [](const ParamSpec& p) { return p.name == "limit_fraction"; })) {
      YAML::Node m(YAML::NodeType::Map);
      m["name"] = e["swap"].Scalar();
      m["limit_fraction"] = r.log_uniform(1e-300, 1e-6);
      e["swap"] = m;
    }
  }
  // A swapping case runs serial half the time (what most swap studies do), else any schedule beside it.
  const bool swaps = e["swap"].IsMap() || e["swap"].as<std::string>() != "none";
  YAML::Node conc = swaps && r.chance(0.5) ? YAML::Node("serial") : draw_policy(concurrency_registry(), r);
  // Mostly what a run accepts, so that most cases reach the simulator; one case in ten keeps the refusal of
  // max_streams above the hardware's limit tested.
  if (conc.IsMap() && conc["max_streams"] && conc["max_streams"].as<int64_t>() > kMaxHardwareStreams &&
      !r.chance(0.1))
    conc["max_streams"] = r.uniform(1, kMaxHardwareStreams);
  e["concurrency"] = conc;
  e["iterations"] = r.uniform(1, 3);
  if (r.chance(0.3)) e["optimizer"] = r.pick(std::vector<std::string>{"sgd-momentum", "adam"});
  if (r.chance(0.4)) e["precision"] = r.pick(std::vector<std::string>{"fp32", "mixed-fp16", "mixed-bf16", "bf16"});
  if (r.chance(0.2)) e["tf32"] = r.pick(std::vector<std::string>{"off", "conv", "all"});
  if (r.chance(0.2)) e["memory_format"] = r.pick(std::vector<std::string>{"nchw", "nhwc"});
  if (r.chance(0.3)) e["kernels"] = r.pick(std::vector<std::string>{"eager", "fused"});
  c.experiment.reset(e);
  return c;
}

namespace {

int64_t numel_of(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// The `back`-th most recent tensor of `hist` (1: the latest other than x) that `ok` accepts, or kNoTensor.
template <class Ok>
TensorId find_back(const std::vector<TensorId>& hist, TensorId x, int64_t back, Ok ok) {
  int64_t seen = 0;
  for (auto it = hist.rbegin(); it != hist.rend(); ++it) {
    if (*it == x || !ok(*it)) continue;
    if (++seen == back) return *it;
  }
  return kNoTensor;
}

}  // namespace

Graph build_fuzz_forward(const FuzzCase& c, const TrainingOptions& training, int64_t batch) {
  ModelBuilder b("simfuzz:" + std::to_string(c.seed), batch, build_options(training));
  std::vector<int64_t> in = {batch};
  in.insert(in.end(), c.input_dims.begin(), c.input_dims.end());
  TensorId x = b.input(in, DType::F32);
  std::vector<TensorId> hist = {x};
  auto shape = [&](TensorId t) { return b.graph().tensor(t).shape; };
  auto dtype = [&](TensorId t) { return b.graph().tensor(t).dtype; };
  auto fits = [](int64_t elems) { return elems > 0 && elems <= kMaxFuzzElems; };
  for (const FuzzLayer& l : c.layers) {
    const std::vector<int64_t> s = shape(x);
    const size_t rank = s.size();
    TensorId y = kNoTensor;
    if (l.kind == "conv" || l.kind == "conv_s2") {
      const int64_t stride = l.kind == "conv" ? 1 : 2, k = std::clamp<int64_t>(l.b | 1, 1, 7);
      const int64_t out = std::clamp<int64_t>(l.a, 1, 512);
      if (rank == 4 && fits(s[0] * out * ((s[2] - 1) / stride + 1) * ((s[3] - 1) / stride + 1)))
        y = b.conv2d(x, out, k, stride, k / 2);
    } else if (l.kind == "bn") {
      if (rank == 4) y = b.batch_norm(x);
    } else if (l.kind == "relu") {
      y = b.relu(x, l.a == 1);
    } else if (l.kind == "gelu") {
      y = b.gelu(x);
    } else if (l.kind == "dropout") {
      y = b.dropout(x, 0.1);
    } else if (l.kind == "softmax") {
      y = b.softmax(x, static_cast<int64_t>(rank) - 1);
    } else if (l.kind == "layernorm") {
      if (rank >= 2) y = b.layer_norm(x);
    } else if (l.kind == "maxpool") {
      if (rank == 4 && s[2] >= 2 && s[3] >= 2) y = b.max_pool(x, 2, 2, 0);
    } else if (l.kind == "gap") {
      if (rank == 4) y = b.adaptive_avg_pool(x, 1, 1);
    } else if (l.kind == "flatten") {
      if (rank == 4) y = b.flatten(x);
    } else if (l.kind == "linear") {
      const int64_t out = std::clamp<int64_t>(l.a, 1, 8192);
      if ((rank == 2 || rank == 3) && fits(numel_of(s) / s.back() * out) && fits(s.back() * out)) y = b.linear(x, out);
    } else if (l.kind == "add" || l.kind == "mul") {
      const TensorId o = find_back(hist, x, std::max<int64_t>(1, l.a),
                                   [&](TensorId t) { return shape(t) == s && dtype(t) == dtype(x); });
      if (o != kNoTensor) y = l.kind == "add" ? b.add(x, o) : b.mul(x, o);
    } else if (l.kind == "concat") {
      const size_t axis = rank == 4 ? 1 : rank - 1;
      const TensorId o = find_back(hist, x, std::max<int64_t>(1, l.a), [&](TensorId t) {
        const auto ts = shape(t);
        if (ts.size() != rank || dtype(t) != dtype(x)) return false;
        for (size_t i = 0; i < rank; ++i)
          if (i != axis && ts[i] != s[i]) return false;
        return fits(numel_of(s) + numel_of(ts));
      });
      if (o != kNoTensor) y = b.concat({x, o}, static_cast<int64_t>(axis));
    } else if (l.kind == "attn") {
      if (rank == 3 && fits(s[0] * s[1] * s[1]) && fits(s[2] * s[2])) {
        const TensorId q = b.linear(x, s[2]);
        const TensorId k = b.linear(x, s[2]);
        const TensorId scores = b.matmul(q, b.transpose(k, {0, 2, 1}));
        y = b.matmul(b.softmax(scores, 2), x);
      }
    } else if (l.kind == "branch") {
      y = find_back(hist, x, std::max<int64_t>(1, l.a), [](TensorId) { return true; });
      if (y != kNoTensor) {  // fan-out: later layers read an earlier tensor again
        x = y;
        continue;
      }
    } else {
      throw ConfigError("", 0, "layers", "unknown layer kind '" + l.kind + "'");
    }
    if (y == kNoTensor) continue;
    x = y;
    hist.push_back(x);
  }
  if (shape(x).size() == 4) x = b.flatten(x);
  const std::vector<int64_t> s = shape(x);
  if (s.size() == 1) x = b.reshape(x, {s[0], 1});
  if (fits(numel_of(shape(x)) / shape(x).back() * c.classes) && fits(shape(x).back() * c.classes))
    x = b.linear(x, c.classes);
  b.cross_entropy_loss(x);
  return b.finish();
}

namespace {
// experiment_from_yaml needs a model it knows; the case's own graph replaces it (the name is never built).
constexpr const char* kPlaceholderModel = "cifar-resnet20";
}  // namespace

namespace {
// `e` is the case's experiment mapping; it is changed (given the placeholder model). Given the loaded node, the
// errors name their lines; given a clone (which keeps no marks), line 0.
Experiment experiment_of_fuzz_node(YAML::Node e, uint64_t seed, const std::string& file) {
  if (!e.IsMap()) throw ConfigError(file, 0, "experiment", "expected an experiment mapping");
  if (e["model"]) throw ConfigError(file, 0, "experiment.model", "a fuzz case builds its own model from `layers`");
  // Settings only the zoo's builders read: the case's graph comes from `input` and `layers`, so each would be
  // ignored, and left in, the placeholder model's check would name a model the case never had.
  for (const char* key : {"image_size", "seq_len", "attention", "max_graph_nodes"})
    if (const YAML::Node v = e[key])
      throw ConfigError(file, v.Mark().line + 1, std::string("experiment.") + key,
                        "a fuzz case's model is built from `input` and `layers`: " + std::string(key) +
                            " means nothing to it");
  e["model"] = kPlaceholderModel;
  Experiment x = experiment_from_yaml(e, file);
  x.model = "simfuzz:" + std::to_string(seed);
  return x;
}
}  // namespace

Experiment fuzz_experiment(const FuzzCase& c, const std::string& file) {
  return experiment_of_fuzz_node(YAML::Clone(c.experiment), c.seed, file);
}

YAML::Node to_yaml(const FuzzCase& c) {
  YAML::Node n(YAML::NodeType::Map);
  n["seed"] = c.seed;
  YAML::Node in(YAML::NodeType::Sequence);
  in.push_back(c.input);
  for (int64_t d : c.input_dims) in.push_back(d);
  in.SetStyle(YAML::EmitterStyle::Flow);
  n["input"] = in;
  n["classes"] = c.classes;
  YAML::Node layers(YAML::NodeType::Sequence);
  for (const FuzzLayer& l : c.layers) {
    YAML::Node e(YAML::NodeType::Sequence);
    e.push_back(l.kind);
    if (l.a != 0 || l.b != 0) e.push_back(l.a);
    if (l.b != 0) e.push_back(l.b);
    e.SetStyle(YAML::EmitterStyle::Flow);
    layers.push_back(e);
  }
  n["layers"] = layers;
  n["experiment"] = YAML::Clone(c.experiment);
  return n;
}

std::string to_yaml_text(const FuzzCase& c) {
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out << to_yaml(c);
  return std::string(out.c_str()) + "\n";
}

FuzzCase fuzz_case_from_yaml(const YAML::Node& n, const std::string& file) {
  YamlMap m(n, file);
  m.check_keys({"seed", "input", "classes", "layers", "experiment"});
  FuzzCase c;
  c.seed = static_cast<uint64_t>(m.get_int("seed", 0));
  const YAML::Node in = m.get("input");
  if (!in.IsSequence() || in.size() < 2) m.fail("input", "expected [cnn, C, H, W], [mlp, F] or [seq, S, H]");
  c.input = yaml_to_string(in[0], file, "input[0]");
  const size_t want = c.input == "cnn" ? 4 : c.input == "mlp" ? 2 : c.input == "seq" ? 3 : 0;
  if (want == 0 || in.size() != want) m.fail("input", "expected [cnn, C, H, W], [mlp, F] or [seq, S, H]");
  for (size_t i = 1; i < in.size(); ++i) {
    const int64_t d = yaml_to_int(in[i], file, "input[" + std::to_string(i) + "]");
    if (d <= 0 || d > (int64_t{1} << 20)) m.fail("input", "dimensions must be in [1, 2^20]");
    c.input_dims.push_back(d);
  }
  c.classes = m.get_int("classes", 10);
  if (c.classes < 1 || c.classes > (int64_t{1} << 20)) m.fail("classes", "must be in [1, 2^20]");
  const YAML::Node layers = m.get("layers");
  if (!layers.IsNull() && !layers.IsSequence()) m.fail("layers", "expected a list of [kind, a, b]");
  const auto& kinds = fuzz_layer_kinds();
  for (size_t i = 0; layers.IsSequence() && i < layers.size(); ++i) {
    const YAML::Node l = layers[i];
    if (!l.IsSequence() || l.size() < 1 || l.size() > 3) m.fail("layers", "entry " + std::to_string(i) + ": expected [kind, a, b]");
    FuzzLayer f;
    const std::string at = "layers[" + std::to_string(i) + "]";
    f.kind = yaml_to_string(l[0], file, at + "[0]");
    if (std::find(kinds.begin(), kinds.end(), f.kind) == kinds.end())
      m.fail("layers", "entry " + std::to_string(i) + ": unknown layer kind '" + f.kind + "'");
    if (l.size() > 1) f.a = yaml_to_int(l[1], file, at + "[1]");
    if (l.size() > 2) f.b = yaml_to_int(l[2], file, at + "[2]");
    c.layers.push_back(f);
  }
  const YAML::Node experiment = m.get("experiment");
  c.experiment.reset(YAML::Clone(experiment));
  experiment_of_fuzz_node(experiment, c.seed, file);  // the experiment's own mistakes: found at load, at their lines
  return c;
}

FuzzCase load_fuzz_case(const std::string& path) { return fuzz_case_from_yaml(load_yaml_file(path), path); }

}  // namespace dlsim
