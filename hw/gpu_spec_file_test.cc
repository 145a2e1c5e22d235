#include "hw/gpu_spec_file.h"

#include <catch2/catch.hpp>

#include <string>

#include "common/config_error.h"
#include "hw/hardware.h"
#include "hw/testing/fixtures.h"

using namespace dlsim;
using testing::TempFile;

namespace {

// A complete, valid file; line numbers are referred to by the error tests below.
const std::string kValid =
    "description: test gpu\n"          // 1
    "sms: 10\n"                         // 2
    "memory:\n"                         // 3
    "  total_mib: 1024\n"               // 4
    "  context_reserve_mib: 24\n"       // 5
    "hbm_bandwidth_gb_per_s: 1000\n"    // 6
    "peak_tflops:\n"                    // 7
    "  fp32: 10\n"                      // 8
    "  tf32: 100\n"                     // 9
    "  bf16: 200\n"                     // 10
    "  fp16: 200\n"                     // 11
    "roofline:\n"                       // 12
    "  compute_efficiency: 0.5\n"       // 13
    "  memory_efficiency: 0.75\n"       // 14
    "  kernel_fixed_us: 1.5\n"          // 15
    "pcie:\n"                           // 16
    "  gen: 4\n"                        // 17
    "  lanes: 16\n"                     // 18
    "  h2d_pinned_gb_per_s: 25\n"       // 19
    "  d2h_pinned_gb_per_s: 24\n"       // 20
    "  h2d_pageable_gb_per_s: 12\n"     // 21
    "  d2h_pageable_gb_per_s: 11\n"     // 22
    "  latency_us: 20\n"                // 23
    "copy_engines: 2\n"                 // 24
    "launch_overhead_us: 5\n"           // 25
    "cudamalloc:\n"                     // 26
    "  base_us: 10\n"                   // 27
    "  us_per_gib: 1000\n"              // 28
    "cudafree:\n"                       // 29
    "  base_us: 5\n"                    // 30
    "  us_per_gib: 500\n";              // 31

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  return s.replace(pos, from.size(), to);
}

// Loads `text` and returns the ConfigError it raises (fails the test when none is raised).
ConfigError load_error(const std::string& text) {
  TempFile f("spec.yaml", text);
  try {
    load_gpu_spec(f.path());
  } catch (const ConfigError& e) {
    CHECK(e.file() == f.path());
    return e;
  }
  FAIL("no ConfigError for:\n" << text);
  return ConfigError("", 0, "", "");
}

}  // namespace

TEST_CASE("a valid hardware file converts every unit to SI") {
  TempFile f("ok.yaml", kValid);
  GpuSpec g = load_gpu_spec(f.path());
  CHECK(g.name == "dlsim_hw_test_" + std::to_string(::getpid()) + "_ok");
  CHECK(g.description == "test gpu");
  CHECK(g.sms == 10);
  CHECK(g.memory_bytes == uint64_t{1000} << 20);
  CHECK(g.hbm_bandwidth == 1e12);
  CHECK(g.peak_fp32 == 10e12);
  CHECK(g.peak_tf32 == 100e12);
  CHECK(g.peak_bf16 == 200e12);
  CHECK(g.kernel_model == "roofline");  // no kernel_times, no kernel_model: the default
  CHECK(g.kernel_model_params.get_double("compute_efficiency") == 0.5);
  CHECK(g.kernel_model_params.get_double("memory_efficiency") == 0.75);
  CHECK(g.kernel_model_params.get_double("kernel_fixed_us") == 1.5);
  CHECK(g.pcie_gen == 4);
  CHECK(g.pcie_lanes == 16);
  CHECK(g.pcie_h2d_pinned == 25e9);
  CHECK(g.pcie_d2h_pinned == 24e9);
  CHECK(g.pcie_h2d_pageable == 12e9);
  CHECK(g.pcie_d2h_pageable == 11e9);
  CHECK(g.pcie_latency_ns == 20000);
  CHECK(g.copy_engines == 2);
  CHECK(g.launch_overhead_ns == 5000);
  CHECK(g.malloc_base_ns == 10000);
  CHECK(g.malloc_ns_per_gib == 1e6);
  CHECK(g.free_base_ns == 5000);
  CHECK(g.free_ns_per_gib == 5e5);
  CHECK(g.kernel_times.empty());
}

TEST_CASE("a missing key names the key and the line of its mapping") {
  ConfigError top = load_error(replace(kValid, "sms: 10\n", ""));
  CHECK(top.key() == "sms");
  CHECK(top.line() == 1);
  CHECK(std::string(top.what()).find("missing") != std::string::npos);

  ConfigError nested = load_error(replace(kValid, "  latency_us: 20\n", ""));
  CHECK(nested.key() == "pcie.latency_us");
  CHECK(nested.line() == 17);  // the pcie mapping starts with "gen" on line 17
}

TEST_CASE("an unknown key names the key, its line and the valid keys") {
  ConfigError top = load_error(replace(kValid, "copy_engines: 2\n", "copy_engines: 2\ncopy_engine: 2\n"));
  CHECK(top.key() == "copy_engine");
  CHECK(top.line() == 25);
  CHECK(std::string(top.what()).find("copy_engines") != std::string::npos);

  ConfigError nested = load_error(replace(kValid, "  fp16: 200\n", "  fp16: 200\n  fp8: 400\n"));
  CHECK(nested.key() == "peak_tflops.fp8");
  CHECK(nested.line() == 12);
}

TEST_CASE("a value of the wrong type names the key and its line") {
  ConfigError i = load_error(replace(kValid, "sms: 10", "sms: many"));
  CHECK(i.key() == "sms");
  CHECK(i.line() == 2);
  CHECK(std::string(i.what()).find("expected an integer") != std::string::npos);

  ConfigError d = load_error(replace(kValid, "  memory_efficiency: 0.75", "  memory_efficiency: high"));
  CHECK(d.key() == "roofline.memory_efficiency");
  CHECK(d.line() == 14);

  ConfigError m = load_error(replace(kValid, "cudafree:\n  base_us: 5\n  us_per_gib: 500\n", "cudafree: 5\n"));
  CHECK(m.key() == "cudafree");
  CHECK(m.line() == 29);
  CHECK(std::string(m.what()).find("mapping") != std::string::npos);
}

TEST_CASE("values out of range are refused with the key and line") {
  ConfigError eff = load_error(replace(kValid, "  compute_efficiency: 0.5", "  compute_efficiency: 1.5"));
  CHECK(eff.key() == "roofline.compute_efficiency");
  CHECK(eff.line() == 13);
  CHECK(std::string(eff.what()).find("must be in (0, 1], got 1.5") != std::string::npos);

  ConfigError bw = load_error(replace(kValid, "  h2d_pinned_gb_per_s: 25", "  h2d_pinned_gb_per_s: 0"));
  CHECK(bw.key() == "pcie.h2d_pinned_gb_per_s");
  CHECK(bw.line() == 19);
  CHECK(std::string(bw.what()).find("must be positive, got 0") != std::string::npos);

  ConfigError lanes = load_error(replace(kValid, "  lanes: 16", "  lanes: 12"));
  CHECK(lanes.key() == "pcie.lanes");

  ConfigError reserve = load_error(replace(kValid, "  context_reserve_mib: 24", "  context_reserve_mib: 2048"));
  CHECK(reserve.key() == "memory.context_reserve_mib");
  CHECK(reserve.line() == 5);
}

TEST_CASE("memory.cublas_workspace_kib and cublaslt_workspace_kib: optional KiB, 0 to 1 GiB") {
  CHECK(load_gpu_spec(TempFile("spec.yaml", kValid).path()).cublas_workspace_bytes == 0);  // absent: none
  const GpuSpec g = load_gpu_spec(
      TempFile("spec.yaml", replace(kValid, "  context_reserve_mib: 24\n",
                                    "  context_reserve_mib: 24\n  cublas_workspace_kib: 32768\n"
                                    "  cublaslt_workspace_kib: 1024\n"))
          .path());
  CHECK(g.cublas_workspace_bytes == uint64_t{32} << 20);
  CHECK(g.cublaslt_workspace_bytes == uint64_t{1} << 20);
  ConfigError neg = load_error(
      replace(kValid, "  context_reserve_mib: 24\n", "  context_reserve_mib: 24\n  cublas_workspace_kib: -1\n"));
  CHECK(neg.key() == "memory.cublas_workspace_kib");
  CHECK(neg.line() == 6);
  // The shipped Hopper files state PyTorch's sm90 default (and the H200's snapshots show it); an A100 takes the
  // default off sm90.
  const GpuSpec h200 = load_hardware("h200").spec;
  CHECK(h200.cublas_workspace_bytes == uint64_t{32} << 20);
  CHECK(h200.cublaslt_workspace_bytes == uint64_t{1} << 20);
  CHECK(load_hardware("h100-sxm-pytorch").spec.cublas_workspace_bytes == uint64_t{32} << 20);
  CHECK(load_hardware("a100-sxm-80gb").spec.cublas_workspace_bytes == (uint64_t{4096} * 2 + 16 * 8) * 1024);
  CHECK(load_hardware("titan-x-pcie3").spec.cublas_workspace_bytes == 0);  // vDNN's 2016 stack: no PyTorch
}

TEST_CASE("kernel_times is read into the table and checked entry by entry") {
  std::string with_table = kValid +
                           "kernel_times:\n"                                      // 32
                           "  - {signature: \"Relu in=f32[4] out=f32[4] attrs=\", ns: 1234}\n"  // 33
                           "  - signature: \"Add in=f32[4];f32[4] out=f32[4] attrs=\"\n"       // 34
                           "    ns: 99\n";                                                      // 35
  TempFile f("table.yaml", with_table);
  GpuSpec g = load_gpu_spec(f.path());
  REQUIRE(g.kernel_times.size() == 2);
  CHECK(g.kernel_times.at("Relu in=f32[4] out=f32[4] attrs=") == 1234);
  CHECK(g.kernel_times.at("Add in=f32[4];f32[4] out=f32[4] attrs=") == 99);

  ConfigError neg = load_error(replace(with_table, "ns: 99", "ns: -3"));
  CHECK(neg.key() == "kernel_times[1].ns");
  CHECK(neg.line() == 35);

  ConfigError dup = load_error(replace(with_table, "Add in=f32[4];f32[4]", "Relu in=f32[4]"));
  CHECK(dup.key() == "kernel_times[1].signature");
  CHECK(dup.line() == 34);

  ConfigError extra = load_error(replace(with_table, "ns: 1234}", "ns: 1234, us: 1}"));
  CHECK(extra.key() == "kernel_times[0].us");

  ConfigError notlist = load_error(kValid + "kernel_times: 5\n");
  CHECK(notlist.key() == "kernel_times");
  CHECK(notlist.line() == 32);
}

TEST_CASE("kernel_model chooses the model by name, the roofline block holds its parameters") {
  const std::string table_line = "kernel_times:\n  - {signature: \"Relu in=f32[4] out=f32[4] attrs=\", ns: 1}\n";
  {
    TempFile f("measured.yaml", kValid + table_line);
    CHECK(load_gpu_spec(f.path()).kernel_model == "table");  // measured times: the table by default
  }
  {
    TempFile f("chosen.yaml", kValid + table_line + "kernel_model: roofline\n");
    CHECK(load_gpu_spec(f.path()).kernel_model == "roofline");  // unless the file says otherwise
  }
  ConfigError unknown = load_error(kValid + "kernel_model: cycle-accurate\n");  // line 32
  CHECK(unknown.key() == "kernel_model");
  CHECK(unknown.line() == 32);
  CHECK(std::string(unknown.what()).find("valid: roofline, table") != std::string::npos);

  ConfigError empty_table = load_error(kValid + "kernel_model: table\n");
  CHECK(empty_table.key() == "kernel_model");
  CHECK(std::string(empty_table.what()).find("needs measured kernel_times") != std::string::npos);

  // Every parameter may be given, or left at its declared default; unknown ones are refused.
  TempFile tiles("tiles.yaml", replace(kValid, "  kernel_fixed_us: 1.5\n", "  kernel_fixed_us: 1.5\n  min_split_k: 256\n"));
  CHECK(load_gpu_spec(tiles.path()).kernel_model_params.get_int("min_split_k") == 256);
  TempFile fewer("fewer.yaml", replace(kValid, "  kernel_fixed_us: 1.5\n", ""));
  CHECK(load_gpu_spec(fewer.path()).kernel_model_params.get_double("kernel_fixed_us") == 2.0);
  ConfigError typo = load_error(replace(kValid, "  kernel_fixed_us: 1.5", "  kernel_fixed_ms: 1.5"));
  CHECK(typo.key() == "roofline.kernel_fixed_ms");
  CHECK(typo.line() == 15);
  CHECK(std::string(typo.what()).find("kernel_fixed_us (double)") != std::string::npos);
  ConfigError tile = load_error(replace(kValid, "  kernel_fixed_us: 1.5", "  kernel_fixed_us: 1.5\n  min_split_k: 0"));
  CHECK(tile.key() == "roofline.min_split_k");
  CHECK(tile.line() == 16);
}

TEST_CASE("a missing file and a YAML syntax error are ConfigErrors") {
  CHECK_THROWS_AS(load_gpu_spec("/nonexistent/dir/x.yaml"), ConfigError);
  ConfigError syntax = load_error("sms: [1, 2\n");
  CHECK(syntax.line() >= 1);
}

TEST_CASE("every shipped hardware file loads and is plausible") {
  std::vector<std::string> names = list_hw_names();
  CHECK(names == std::vector<std::string>{"a100-sxm-40gb", "a100-sxm-80gb", "gh200", "h100-sxm", "h100-sxm-datasheet",
                                          "h100-sxm-fitted", "h100-sxm-harness", "h100-sxm-pytorch", "h200",
                                          "h200-datasheet", "h200-fitted", "titan-x-pcie3", "v100-sxm2-16gb",
                                          "v100-sxm2-32gb"});
  for (const auto& n : names) {
    INFO(n);
    GpuSpec g = load_hardware(n).spec;  // the -pytorch variants start from another file (base:)
    CHECK(g.name == n);
    CHECK(g.sms > 0);
    CHECK(g.memory_bytes > (uint64_t{8} << 30));
    if (g.peak_fp16 > 0) CHECK(g.peak_fp16 > g.peak_fp32);  // fp16 tensor cores where listed (not Maxwell's Titan X)
    if (g.peak_tf32 > 0) CHECK(g.peak_tf32 > g.peak_fp32);
    if (g.peak_bf16 > 0) CHECK(g.peak_bf16 > g.peak_fp32);
    CHECK(g.pcie_h2d_pinned > g.pcie_h2d_pageable);
    CHECK(g.copy_engines >= 2);  // one per direction at least, so H2D and D2H overlap
  }
  GpuSpec h100 = load_gpu_spec(resolve_hw_path("h100-sxm-harness"));
  // The harness-calibrated file (results/validation/calibrate_h100.sh): measured tables over the datasheet's figures.
  CHECK(h100.kernel_times.size() > 1000);
  CHECK(h100.conv_workspace.size() > 500);
  // Measured first: an op no table entry serves takes its kind's measured correction; only kinds no calibration run
  // measured take the per-class model fitted to published data ([F]).
  CHECK(h100.op_class_scale.size() > 30);
  CHECK(h100.kernel_model_params.get_double("gemm_tf32_efficiency") > 0);
  CHECK(load_gpu_spec(resolve_hw_path("h100-sxm-datasheet")).kernel_times.empty());
  CHECK(h100.sms == 132);
  CHECK(h100.memory_bytes == uint64_t{81106 - 512} << 20);
  CHECK(h100.total_memory_bytes == uint64_t{81106} << 20);  // totalGlobalMem: the context's share included
  CHECK(h100.hbm_bandwidth == 3350e9);
  CHECK(h100.peak_bf16 == Approx(989.4e12));
  CHECK(h100.pcie_gen == 5);
  CHECK(h100.copy_engines == 3);
  // Volta: fp16 tensor cores only (the file lists no tf32 or bf16 rate).
  GpuSpec v100 = load_gpu_spec(resolve_hw_path("v100-sxm2-16gb"));
  CHECK(v100.peak_fp16 == Approx(125e12));
  CHECK(v100.peak_tf32 == 0);
  CHECK(v100.peak_bf16 == 0);
}

TEST_CASE("resolve_hw_path takes a name or a path and lists valid names when unknown") {
  std::string p = resolve_hw_path("h200");
  CHECK(p.size() > std::string("configs/hw/h200.yaml").size());
  CHECK(p.ends_with("configs/hw/h200.yaml"));
  CHECK(resolve_hw_path(p) == p);
  try {
    resolve_hw_path("h300");
    FAIL("no error for an unknown name");
  } catch (const ConfigError& e) {
    std::string what = e.what();
    CHECK(e.key() == "hw");
    CHECK(what.find("h300") != std::string::npos);
    CHECK(what.find("a100-sxm-40gb, a100-sxm-80gb, gh200, h100-sxm, h100-sxm-datasheet, h100-sxm-fitted, "
                    "h100-sxm-harness, h100-sxm-pytorch, h200, h200-datasheet, h200-fitted, titan-x-pcie3, "
                    "v100-sxm2-16gb, v100-sxm2-32gb") != std::string::npos);
  }
  CHECK_THROWS_AS(resolve_hw_path("/no/such/gpu.yaml"), ConfigError);
}

TEST_CASE("calibrated tables: batch-free entries, conv_workspace (0 bytes allowed) and op_class_scale") {
  std::string text = replace(kValid, "  kernel_fixed_us: 1.5\n",
                             "  kernel_fixed_us: 1.5\n  op_class_scale: {Conv2d: 3.25, BatchNormBwd: 0.5}\n"
                             "  op_class_scale_path: {Conv2d: tf32}\n") +
                     "kernel_times:\n"
                     "  - {signature: \"Relu in=f32[32,8] out=f32[32,8] attrs=\", ns: 400, batch_free: "
                     "\"Relu in=f32[B,8] out=f32[B,8] attrs=\", batch: 32}\n"
                     "  - {signature: \"Relu in=f32[64,8] out=f32[64,8] attrs=\", ns: 700, batch_free: "
                     "\"Relu in=f32[B,8] out=f32[B,8] attrs=\", batch: 64}\n"
                     "conv_workspace:\n"
                     "  - {signature: \"Conv2d a\", bytes: 0, algorithm: \"fwd#0\"}\n"
                     "  - {signature: \"Conv2d b\", bytes: 4096, algorithm: \"fwd#1\", batch_free: \"Conv2d B\", "
                     "batch: 32}\n";
  TempFile f("cal.yaml", text);
  const GpuSpec g = load_gpu_spec(f.path());
  CHECK(g.op_class_scale.at(OpKind::Conv2d) == 3.25);
  CHECK(g.op_class_scale.at(OpKind::BatchNormBwd) == 0.5);
  CHECK(g.op_class_scale_path.at(OpKind::Conv2d) == MathPath::Tf32);
  const auto& scaled = g.kernel_times_by_batch.at("Relu in=f32[B,8] out=f32[B,8] attrs=");
  REQUIRE(scaled.size() == 2);
  CHECK(scaled[0] == std::pair<int64_t, TimeNs>{32, 400});  // sorted by batch
  CHECK(g.conv_workspace.at("Conv2d a") == 0);
  CHECK(g.conv_workspace_by_batch.at("Conv2d B").front() == std::pair<int64_t, uint64_t>{32, 4096});

  CHECK(load_error(replace(text, "Conv2d: 3.25", "Conv3d: 3.25")).key() == "roofline.op_class_scale.Conv3d");
  CHECK(load_error(replace(text, "Conv2d: 3.25", "Conv2d: 0")).key() == "roofline.op_class_scale.Conv2d");
  // A convolution's factor names the path it was measured on, and only such kinds name one.
  CHECK(load_error(replace(text, "{Conv2d: tf32}", "{}")).key() == "roofline.op_class_scale_path");
  CHECK(load_error(replace(text, "{Conv2d: tf32}", "{Conv2d: tensor}")).key() == "roofline.op_class_scale_path.Conv2d");
  CHECK(load_error(replace(text, "{Conv2d: tf32}", "{Conv2d: tf32, BatchNormBwd: cuda-core}")).key() ==
        "roofline.op_class_scale_path.BatchNormBwd");
  CHECK(load_error(replace(text, "{Conv2d: tf32}", "{Conv2d: tf32, Linear: tf32}")).key() ==
        "roofline.op_class_scale_path.Linear");
  // Beside per-class efficiencies (which serve the kinds it does not name).
  TempFile both("both.yaml", replace(text, "  kernel_fixed_us: 1.5\n", "  kernel_fixed_us: 1.5\n  gemm_tf32_efficiency: 0.5\n"));
  const GpuSpec b = load_gpu_spec(both.path());
  CHECK(b.op_class_scale.size() == 2);
  CHECK(b.kernel_model_params.get_double("gemm_tf32_efficiency") == 0.5);
  CHECK(load_error(replace(text, "bytes: 0,", "bytes: -1,")).key() == "conv_workspace[0].bytes");
  CHECK(load_error(replace(text, ", batch: 64}", "}")).key() == "kernel_times[1].batch_free");
}

TEST_CASE("concurrent_kernels: optional, [A] defaults, each key range-checked with file, line and key") {
  TempFile plain("plain.yaml", kValid);
  const GpuSpec d = load_gpu_spec(plain.path());
  CHECK(d.concurrency == ConcurrencySpec{});
  CHECK(d.concurrency.max_connections == 8);  // CUDA_DEVICE_MAX_CONNECTIONS' default

  const std::string block =
      "concurrent_kernels:\n"           // 32
      "  max_connections: 4\n"          // 33
      "  gemm_blocks_per_sm: 1\n"       // 34
      "  elementwise_blocks_per_sm: 8\n"  // 35
      "  hbm_share_fraction: 0.85\n"    // 36
      "  co_run_slowdown: 0.2\n"        // 37
      "  graph_launch_us: 7.5\n"        // 38
      "  graph_node_us: 0.25\n"         // 39
      "  launch_queue_depth: 64\n"      // 40
      "  copy_slowdown: 0.075\n";       // 41
  TempFile full("full.yaml", kValid + block);
  const ConcurrencySpec c = load_gpu_spec(full.path()).concurrency;
  CHECK(c.max_connections == 4);
  CHECK(c.gemm_blocks_per_sm == 1);
  CHECK(c.elementwise_blocks_per_sm == 8);
  CHECK(c.hbm_share_fraction == 0.85);
  CHECK(c.co_run_slowdown == 0.2);
  CHECK(c.graph_launch_ns == 7500);
  CHECK(c.graph_node_ns == 250);
  CHECK(c.launch_queue_depth == 64);
  CHECK(c.copy_slowdown == 0.075);
  CHECK(d.concurrency.copy_slowdown == 0.0);  // [A] off unless a file measured it
  CHECK(d.concurrency.launch_queue_depth == 1024);  // [A] about a thousand per stream

  struct Bad {
    std::string from, to, key;
    int line;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {"max_connections: 4", "max_connections: 0", "concurrent_kernels.max_connections", 33, "out of range [1, 32]"},
      {"max_connections: 4", "max_connections: 33", "concurrent_kernels.max_connections", 33, "out of range [1, 32]"},
      {"gemm_blocks_per_sm: 1", "gemm_blocks_per_sm: 0", "concurrent_kernels.gemm_blocks_per_sm", 34, "out of range"},
      {"elementwise_blocks_per_sm: 8", "elementwise_blocks_per_sm: 65", "concurrent_kernels.elementwise_blocks_per_sm",
       35, "out of range [1, 64]"},
      {"hbm_share_fraction: 0.85", "hbm_share_fraction: 0", "concurrent_kernels.hbm_share_fraction", 36,
       "must be in (0, 1], got 0"},
      {"hbm_share_fraction: 0.85", "hbm_share_fraction: 1.5", "concurrent_kernels.hbm_share_fraction", 36,
       "must be in (0, 1], got 1.5"},
      {"co_run_slowdown: 0.2", "co_run_slowdown: -0.1", "concurrent_kernels.co_run_slowdown", 37,
       "must be in [0, 10], got -0.1"},
      {"graph_launch_us: 7.5", "graph_launch_us: -1", "concurrent_kernels.graph_launch_us", 38, "must not be negative"},
      {"graph_node_us: 0.25", "graph_node_us: fast", "concurrent_kernels.graph_node_us", 39, "expected"},
      {"launch_queue_depth: 64", "launch_queue_depth: 64\n  streams: 3", "concurrent_kernels.streams", 41, "max_connections"},
      {"copy_slowdown: 0.075", "copy_slowdown: -0.5", "concurrent_kernels.copy_slowdown", 41,
       "must be in [0, 10], got -0.5"},
      {"launch_queue_depth: 64", "launch_queue_depth: -1", "concurrent_kernels.launch_queue_depth", 40, "out of range"},
  };
  for (const Bad& b : bad) {
    INFO(b.to);
    const ConfigError e = load_error(replace(kValid + block, b.from, b.to));
    CHECK(e.key() == b.key);
    CHECK(e.line() == b.line);
    CHECK(std::string(e.what()).find(b.message) != std::string::npos);
  }
}
