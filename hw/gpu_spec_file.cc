#include "hw/gpu_spec_file.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <vector>

#include "common/config_error.h"
#include "common/sim_time.h"
#include "common/strings.h"
#include "common/yaml_reader.h"
#include "hw/conv_scratch.h"
#include "hw/cost_model.h"
#include "hw/host_cpu_file.h"
#include "hw/interconnect_file.h"
#include "hw/fitted/fitted_kernels_yaml.h"
#include "hw/math_path.h"
#include "workloads/shape.h"

namespace dlsim {

// The YAML uses units a person reads off a datasheet (GiB, GB/s, TFLOPS, µs); the struct holds SI units.
// 1 GB = 1e9 bytes (datasheets and bandwidthTest use decimal units), 1 MiB = 2^20 bytes (deviceQuery's "MBytes").
namespace {

constexpr double kBytesPerGB = 1e9;
constexpr double kFlopsPerTflop = 1e12;
constexpr uint64_t kBytesPerMiB = uint64_t{1} << 20;

TimeNs us_to_ns(double us) { return static_cast<TimeNs>(std::llround(us * 1000.0)); }

double get_positive(const YamlMap& m, const std::string& key) {
  double v = m.get_double(key);
  if (!(v > 0)) m.fail(key, "must be positive, got " + significant(v));
  return v;
}

double get_non_negative(const YamlMap& m, const std::string& key) {
  double v = m.get_double(key);
  if (v < 0) m.fail(key, "must not be negative, got " + significant(v));
  return v;
}

// A time in µs (a latency, an overhead, a fixed cost): non-negative and at most kMaxDurationUs (1e12 µs), so that
// the simulator's integer-nanosecond arithmetic on it cannot wrap (common/sim_time.h).
TimeNs get_time_us(const YamlMap& m, const std::string& key) {
  const double v = get_non_negative(m, key);
  if (v > kMaxDurationUs)
    m.fail(key, "must be at most 1e12 us (about 11.6 days, dlsim's limit for one duration), got " + significant(v));
  return us_to_ns(v);
}

int64_t get_int_in_range(const YamlMap& m, const std::string& key, int64_t lo, int64_t hi) {
  int64_t v = m.get_int(key);
  if (v < lo || v > hi)
    m.fail(key, "value " + std::to_string(v) + " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

void read_memory(const YamlMap& m, GpuSpec& g) {
  m.check_keys({"total_mib", "context_reserve_mib", "cublas_workspace_kib", "cublaslt_workspace_kib"});
  // At most 2^25 MiB (32 TiB): below the simulator's "no memory limit" device (2^46 bytes, experiment/swap_planning.h)
  // and the virtual-memory address ranges (from 2^47, policies/pool/virtual_device_memory.h), which a larger
  // device's malloc addresses would run into.
  int64_t total = get_int_in_range(m, "total_mib", 1, kMaxDeviceMib);
  int64_t reserve = get_int_in_range(m, "context_reserve_mib", 0, kMaxDeviceMib);
  if (reserve >= total) m.fail("context_reserve_mib", "must be less than total_mib");
  g.memory_bytes = static_cast<uint64_t>(total - reserve) * kBytesPerMiB;
  g.total_memory_bytes = static_cast<uint64_t>(total) * kBytesPerMiB;
  // PyTorch's cuBLAS workspaces, taken from the pool (hw/cublas_workspace.h); at most 1 GiB each.
  constexpr int64_t kMaxWorkspaceKib = int64_t{1} << 20;
  if (m.has("cublas_workspace_kib"))
    g.cublas_workspace_bytes = static_cast<uint64_t>(get_int_in_range(m, "cublas_workspace_kib", 0, kMaxWorkspaceKib)) * 1024;
  if (m.has("cublaslt_workspace_kib"))
    g.cublaslt_workspace_bytes =
        static_cast<uint64_t>(get_int_in_range(m, "cublaslt_workspace_kib", 0, kMaxWorkspaceKib)) * 1024;
}

// fp32 (CUDA cores) is required; each tensor-core type is listed only when the GPU has tensor cores for it.
void read_peaks(const YamlMap& m, GpuSpec& g) {
  m.check_keys({"fp32", "tf32", "bf16", "fp16"});
  g.peak_fp32 = get_positive(m, "fp32") * kFlopsPerTflop;
  if (m.has("tf32")) g.peak_tf32 = get_positive(m, "tf32") * kFlopsPerTflop;
  if (m.has("bf16")) g.peak_bf16 = get_positive(m, "bf16") * kFlopsPerTflop;
  if (m.has("fp16")) g.peak_fp16 = get_positive(m, "fp16") * kFlopsPerTflop;
}

// The op kind spelt `name` (as to_string writes it), or none.
std::optional<OpKind> op_kind_named(const std::string& name) {
  for (int k = 0; k <= static_cast<int>(OpKind::Other); ++k)
    if (name == to_string(static_cast<OpKind>(k))) return static_cast<OpKind>(k);
  return std::nullopt;
}

// roofline.op_class_scale (written by calibration): measured / roofline time per op kind. A map, not a scalar
// parameter of the kernel model, so it is read here and left out of the block the model's specs check.
void read_op_class_scale(const YamlMap& roofline, GpuSpec& g) {
  const YamlMap cs = roofline.get_map("op_class_scale");
  for (const auto& kv : cs.node()) {
    const std::string kind = yaml_key(kv.first, cs.file(), "roofline.op_class_scale");
    const std::optional<OpKind> k = op_kind_named(kind);
    if (!k) cs.fail(kind, "not an op kind (e.g. Conv2d, BatchNormBwd)");
    const double v = cs.get_double(kind);
    if (!(v > 0 && v <= 1e6)) cs.fail(kind, "a factor in (0, 1e6], got " + std::to_string(v));
    g.op_class_scale[*k] = v;
  }
}

// roofline.op_class_scale_path: the math path each convolution or matrix-product factor was measured on. Every
// such kind with a factor needs one (a factor without it would serve 16-bit and TF32 kernels it never saw).
void read_op_class_scale_path(const YamlMap& roofline, GpuSpec& g) {
  if (roofline.has("op_class_scale_path")) {
    const YamlMap ps = roofline.get_map("op_class_scale_path");
    for (const auto& kv : ps.node()) {
      const std::string kind = yaml_key(kv.first, ps.file(), "roofline.op_class_scale_path");
      const std::optional<OpKind> k = op_kind_named(kind);
      if (!k || !is_matrix_op(*k))
        ps.fail(kind, "not a convolution or matrix-product op kind (e.g. Conv2d, LinearBwdData)");
      if (!g.op_class_scale.contains(*k)) ps.fail(kind, "has no factor in op_class_scale");
      const std::string path = ps.get_string(kind);
      int p = 0;
      while (p <= static_cast<int>(MathPath::Bf16) && path != to_string(static_cast<MathPath>(p))) ++p;
      if (p > static_cast<int>(MathPath::Bf16)) {
        std::vector<std::string> paths;  // the list the loop above accepts
        for (int q = 0; q <= static_cast<int>(MathPath::Bf16); ++q) paths.push_back(to_string(static_cast<MathPath>(q)));
        ps.fail(kind, "unknown math path '" + path + "'; valid: " + join(paths));
      }
      g.op_class_scale_path[*k] = static_cast<MathPath>(p);
    }
  }
  for (const auto& [k, v] : g.op_class_scale)
    if (is_matrix_op(k) && !g.op_class_scale_path.contains(k))
      roofline.fail("op_class_scale_path", std::string("needs the math path of ") + to_string(k) +
                                               "'s factor (dlsim calibrate writes it)");
}

// `kernel_model:` (optional) chooses the model by name, or is itself the fitted model's mapping (`dlsim
// fit-kernels` writes it: hw/fitted/fitted_kernels_yaml.h), which makes the model `fitted`; the `roofline:` block
// holds the parameters, checked against the model's specs (every key optional, with the declared default).
// Reads kernel_times first: the default model depends on it.
void read_kernel_model(const YamlMap& m, GpuSpec& g) {
  g.kernel_model = g.kernel_times.empty() ? "roofline" : "table";
  if (m.has("kernel_model") && m.get("kernel_model").IsMap()) {
    g.fitted_kernels = fitted_kernels_from_yaml(m.get_map("kernel_model"));
    g.kernel_model = "fitted";
  } else if (m.has("kernel_model")) {
    g.kernel_model = m.get_string("kernel_model");
    kernel_model_registry().get(g.kernel_model, m.file(), m.line_of("kernel_model"), "kernel_model");
    if (g.kernel_model == "table" && g.kernel_times.empty())
      m.fail("kernel_model", "the table model needs measured kernel_times (dlsim calibrate writes them)");
    if (g.kernel_model == "fitted")
      m.fail("kernel_model", "the fitted model is the kernel_model mapping itself (its classes, which dlsim "
                             "fit-kernels writes), not a name");
  }
  const auto& entry = kernel_model_registry().get(g.kernel_model);
  const YamlMap roofline = m.get_map("roofline");  // required, and a mapping
  if (roofline.has("op_class_scale_path") && !roofline.has("op_class_scale"))
    roofline.fail("op_class_scale_path", "goes with op_class_scale");
  const bool calibrated = roofline.has("op_class_scale");
  // A copy made by construction: assigning a clone to a YAML::Node that refers into the file's tree rebinds that
  // tree's node too (yaml-cpp's Node::operator=), and the removals below would reach the caller's document.
  YAML::Node block = calibrated ? YAML::Clone(m.get("roofline")) : m.get("roofline");
  if (calibrated) {
    read_op_class_scale(roofline, g);
    read_op_class_scale_path(roofline, g);
    block.remove("op_class_scale");
    block.remove("op_class_scale_path");
  }
  // op_class_scale corrects the single-efficiency roofline for the kinds it names; per-class efficiencies beside
  // it serve the other kinds (hw/roofline.h).
  g.kernel_model_params = params_from_yaml(entry.params, block, m.file(), entry.name, "roofline", "");
}

void read_pcie(const YamlMap& m, GpuSpec& g) {
  m.check_keys({"gen", "lanes", "h2d_pinned_gb_per_s", "d2h_pinned_gb_per_s", "h2d_pageable_gb_per_s",
                "d2h_pageable_gb_per_s", "latency_us", "h2d_latency_us", "d2h_latency_us"});
  g.pcie_gen = static_cast<int>(get_int_in_range(m, "gen", 1, 7));
  int64_t lanes = m.get_int("lanes");
  if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16)
    m.fail("lanes", "expected 1, 2, 4, 8 or 16, got " + std::to_string(lanes));
  g.pcie_lanes = static_cast<int>(lanes);
  g.pcie_h2d_pinned = get_positive(m, "h2d_pinned_gb_per_s") * kBytesPerGB;
  g.pcie_d2h_pinned = get_positive(m, "d2h_pinned_gb_per_s") * kBytesPerGB;
  g.pcie_h2d_pageable = get_positive(m, "h2d_pageable_gb_per_s") * kBytesPerGB;
  g.pcie_d2h_pageable = get_positive(m, "d2h_pageable_gb_per_s") * kBytesPerGB;
  g.pcie_latency_ns = get_time_us(m, "latency_us");
  if (m.has("h2d_latency_us")) g.pcie_h2d_latency_ns = get_time_us(m, "h2d_latency_us");
  if (m.has("d2h_latency_us")) g.pcie_d2h_latency_ns = get_time_us(m, "d2h_latency_us");
}

// cudaMalloc / cudaFree cost: base + per GiB.
void read_alloc_cost(const YamlMap& m, TimeNs& base_ns, double& ns_per_gib) {
  m.check_keys({"base_us", "us_per_gib"});
  base_ns = get_time_us(m, "base_us");
  ns_per_gib = static_cast<double>(get_time_us(m, "us_per_gib"));
}

// A measured table: a list of {signature, <value_key>, batch_free?, batch?, ...extra keys}; `put(sig, value)`
// stores the exact entry, `put_scaled(batch_free, batch, value)` the batch-free one.
template <class Put, class PutScaled>
void read_measured_table(const YamlMap& top, const std::string& key, const std::string& value_key, int64_t min_value,
                         int64_t max_value,
                         const std::vector<std::string>& extra_keys, Put put, PutScaled put_scaled) {
  YAML::Node list = top.get(key);
  if (list.IsNull()) return;  // "key:" with nothing after it: an empty table
  if (!list.IsSequence()) top.fail(key, "expected a list of {signature, " + value_key + "}");
  std::vector<std::string> allowed = {"signature", value_key, "batch_free", "batch"};
  allowed.insert(allowed.end(), extra_keys.begin(), extra_keys.end());
  for (size_t i = 0; i < list.size(); ++i) {
    YamlMap e(list[i], top.file(), key + "[" + std::to_string(i) + "]");
    e.check_keys(allowed);
    std::string sig = e.get_string("signature");
    if (sig.empty()) e.fail("signature", "must not be empty");
    const int64_t v = e.get_int(value_key);
    if (v < min_value || v > max_value)
      e.fail(value_key, "must be in [" + std::to_string(min_value) + ", " + std::to_string(max_value) + "], got " +
                            std::to_string(v));
    if (!put(sig, v)) e.fail("signature", "duplicate signature '" + sig + "'");
    if (e.has("batch_free") != e.has("batch")) e.fail(e.has("batch") ? "batch" : "batch_free", "batch_free and batch go together");
    if (e.has("batch_free")) {
      const int64_t b = e.get_int("batch");
      if (b <= 0) e.fail("batch", "must be positive, got " + std::to_string(b));
      put_scaled(e.get_string("batch_free"), b, v);
    }
  }
}

template <class T>
void add_scaled(std::map<std::string, std::vector<std::pair<int64_t, T>>>& m, const std::string& key, int64_t batch,
                T v) {
  auto& list = m[key];
  list.emplace_back(batch, v);
  std::sort(list.begin(), list.end());
}

void read_kernel_times(const YamlMap& top, GpuSpec& g) {
  read_measured_table(
      top, "kernel_times", "ns", 1, kMaxDurationNs, {},
      [&](const std::string& sig, int64_t ns) { return g.kernel_times.emplace(sig, ns).second; },
      [&](const std::string& key, int64_t b, int64_t ns) { add_scaled<TimeNs>(g.kernel_times_by_batch, key, b, ns); });
}

void read_conv_workspace(const YamlMap& top, GpuSpec& g) {
  read_measured_table(
      top, "conv_workspace", "bytes", 0, static_cast<int64_t>(kMaxTensorBytes), {"algorithm"},
      [&](const std::string& sig, int64_t bytes) {
        return g.conv_workspace.emplace(sig, static_cast<uint64_t>(bytes)).second;
      },
      [&](const std::string& key, int64_t b, int64_t bytes) {
        add_scaled<uint64_t>(g.conv_workspace_by_batch, key, b, static_cast<uint64_t>(bytes));
      });
}

// `concurrent_kernels:` (optional, every key optional with ConcurrencySpec's default).
void read_concurrency(const YamlMap& m, GpuSpec& g) {
  m.check_keys({"max_connections", "gemm_blocks_per_sm", "elementwise_blocks_per_sm", "hbm_share_fraction",
                "co_run_slowdown", "copy_slowdown", "graph_launch_us", "graph_node_us", "launch_queue_depth"});
  ConcurrencySpec& c = g.concurrency;
  if (m.has("max_connections")) c.max_connections = static_cast<int>(get_int_in_range(m, "max_connections", 1, 32));
  if (m.has("gemm_blocks_per_sm"))
    c.gemm_blocks_per_sm = static_cast<int>(get_int_in_range(m, "gemm_blocks_per_sm", 1, 64));
  if (m.has("elementwise_blocks_per_sm"))
    c.elementwise_blocks_per_sm = static_cast<int>(get_int_in_range(m, "elementwise_blocks_per_sm", 1, 64));
  if (m.has("hbm_share_fraction")) {
    c.hbm_share_fraction = m.get_double("hbm_share_fraction");
    if (!(c.hbm_share_fraction > 0 && c.hbm_share_fraction <= 1))
      m.fail("hbm_share_fraction", "must be in (0, 1], got " + significant(c.hbm_share_fraction));
  }
  if (m.has("co_run_slowdown")) {
    c.co_run_slowdown = m.get_double("co_run_slowdown");
    if (!(c.co_run_slowdown >= 0 && c.co_run_slowdown <= 10))
      m.fail("co_run_slowdown", "must be in [0, 10], got " + significant(c.co_run_slowdown));
  }
  if (m.has("copy_slowdown")) {
    c.copy_slowdown = m.get_double("copy_slowdown");
    if (!(c.copy_slowdown >= 0 && c.copy_slowdown <= 10))
      m.fail("copy_slowdown", "must be in [0, 10], got " + significant(c.copy_slowdown));
  }
  if (m.has("graph_launch_us")) c.graph_launch_ns = get_time_us(m, "graph_launch_us");
  if (m.has("graph_node_us")) c.graph_node_ns = get_time_us(m, "graph_node_us");
  if (m.has("launch_queue_depth"))
    c.launch_queue_depth = static_cast<int>(get_int_in_range(m, "launch_queue_depth", 0, 1 << 20));
}

std::filesystem::path hw_dir() {
  // The environment wins so that an installed binary can point at a copied configs/ tree.
  const char* env = std::getenv("DLSIM_SOURCE_DIR");
  std::filesystem::path root = (env && *env) ? env : DLSIM_SOURCE_DIR;
  return root / "configs" / "hw";
}

}  // namespace

GpuSpec load_gpu_spec(const std::string& path) { return gpu_spec_from_yaml(load_yaml_file(path), path); }

GpuSpec measured_tables_from_yaml(const YAML::Node& node, const std::string& path) {
  const YamlMap m(node, path);
  GpuSpec g;
  if (m.has("kernel_times")) read_kernel_times(m, g);
  if (m.has("conv_workspace")) read_conv_workspace(m, g);
  return g;
}

GpuSpec gpu_spec_from_yaml(const YAML::Node& node, const std::string& path, const GpuSpec* measured) {
  YamlMap m(node, path);
  m.check_keys({"description", "sms", "memory", "hbm_bandwidth_gb_per_s", "peak_tflops", "kernel_model", "roofline",
                "pcie", "copy_engines", "launch_overhead_us", "cudamalloc", "cudafree", "kernel_times",
                "conv_workspace", "conv_scratch", "conv_scratch_neighbours", "concurrent_kernels", "host_cpu", "interconnect", "node", "base"});
  // `base:` is laid under the file when it is loaded (hw/hardware_base.h); one still here was not resolved.
  if (m.has("base"))
    m.fail("base", "a hardware file's base is resolved when the file is loaded; it cannot be set here (an "
                   "hw_override, or a mapping given in code)");
  GpuSpec g;
  g.name = std::filesystem::path(path).stem().string();
  g.file = path;
  g.description = m.get_text("description");
  g.sms = static_cast<int>(get_int_in_range(m, "sms", 1, 100000));
  read_memory(m.get_map("memory"), g);
  g.hbm_bandwidth = get_positive(m, "hbm_bandwidth_gb_per_s") * kBytesPerGB;
  read_peaks(m.get_map("peak_tflops"), g);
  read_pcie(m.get_map("pcie"), g);
  g.copy_engines = static_cast<int>(get_int_in_range(m, "copy_engines", 1, 64));
  g.launch_overhead_ns = get_time_us(m, "launch_overhead_us");
  read_alloc_cost(m.get_map("cudamalloc"), g.malloc_base_ns, g.malloc_ns_per_gib);
  read_alloc_cost(m.get_map("cudafree"), g.free_base_ns, g.free_ns_per_gib);
  if (m.has("concurrent_kernels")) read_concurrency(m.get_map("concurrent_kernels"), g);
  if (m.has("host_cpu")) read_host_cpu(m.get_map("host_cpu"), g);
  if (m.has("node")) g.node = read_node(m.get_map("node"));
  if (m.has("interconnect")) {
    // The links are priced per node: without the node's size a collective's ring cannot be laid out.
    if (!g.node) m.fail("interconnect", "needs the node: section (node.gpus_per_node) beside it");
    g.interconnect = read_interconnect(m.get_map("interconnect"));
    if (g.node->max_nodes > 1 && !g.interconnect->inter)
      m.fail("node", "max_nodes " + std::to_string(g.node->max_nodes) +
                         " spans nodes: interconnect.inter_node must describe the network between them");
  }
  if (measured) {
    g.kernel_times = measured->kernel_times;
    g.kernel_times_by_batch = measured->kernel_times_by_batch;
    g.conv_workspace = measured->conv_workspace;
    g.conv_workspace_by_batch = measured->conv_workspace_by_batch;
  } else {
    if (m.has("kernel_times")) read_kernel_times(m, g);
    if (m.has("conv_workspace")) read_conv_workspace(m, g);
  }
  read_conv_scratch(m, g);
  read_kernel_model(m, g);
  return g;
}

std::vector<std::string> list_hw_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(hw_dir(), ec))
    if (e.is_regular_file() && e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());  // directory order is unspecified
  return names;
}

bool is_hw_path(const std::string& name_or_path) {
  return name_or_path.find('/') != std::string::npos || (name_or_path.size() > 5 && name_or_path.ends_with(".yaml"));
}

std::string resolve_hw_path(const std::string& name_or_path) {
  if (is_hw_path(name_or_path)) {
    if (!std::filesystem::is_regular_file(name_or_path))
      throw ConfigError(name_or_path, 0, "hw", "hardware file not found");
    return name_or_path;
  }
  std::filesystem::path p = hw_dir() / (name_or_path + ".yaml");
  if (!std::filesystem::is_regular_file(p))
    throw ConfigError("", 0, "hw",
                      "unknown hardware '" + name_or_path + "'; valid: " + join(list_hw_names()) + ", or " +
                          kHwPathText);
  return p.string();
}

}  // namespace dlsim
