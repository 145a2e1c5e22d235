#pragma once
// Test-only (namespace dlsim::testing): small hand-built GpuSpecs, graphs and YAML files shared by the hw/ tests.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "hw/gpu_spec.h"
#include "hw/roofline.h"
#include "workloads/graph.h"

namespace dlsim::testing {

// Round numbers so that expected times can be worked out by hand in the tests.
inline GpuSpec round_spec() {
  GpuSpec s;
  s.name = "round";
  s.sms = 100;
  s.memory_bytes = uint64_t{1} << 30;
  s.hbm_bandwidth = 1e12;
  s.peak_fp32 = 10e12;
  s.peak_tf32 = 100e12;
  s.peak_bf16 = 200e12;
  s.peak_fp16 = 400e12;
  s.kernel_model_params.set("compute_efficiency", 0.5);  // as round_roofline()
  s.kernel_model_params.set("memory_efficiency", 0.5);
  s.kernel_model_params.set("kernel_fixed_us", 1.0);
  s.pcie_h2d_pinned = 25e9;
  s.pcie_d2h_pinned = 20e9;
  s.pcie_h2d_pageable = 10e9;
  s.pcie_d2h_pageable = 8e9;
  s.pcie_latency_ns = 20000;
  s.copy_engines = 2;
  return s;
}

// round_spec()'s roofline parameters: half of every peak, 1 µs per kernel; the tile sizes at their defaults.
inline RooflineOptions round_roofline() {
  RooflineOptions o;
  o.compute_efficiency = 0.5;
  o.memory_efficiency = 0.5;
  o.kernel_fixed_ns = 1000;
  return o;
}

inline TensorId add_tensor(Graph& g, const std::string& name, DType t, std::vector<int64_t> shape) {
  Tensor x;
  x.name = name;
  x.dtype = t;
  x.shape = std::move(shape);
  x.bytes = static_cast<uint64_t>(numel(x.shape)) * dtype_bytes(t);
  return g.add_tensor(std::move(x));
}

inline OpId add_op(Graph& g, OpKind k, std::vector<TensorId> in, std::vector<TensorId> out, double flops,
                   uint64_t bytes_read, uint64_t bytes_written, const std::string& name = "op") {
  Op o;
  o.name = name;
  o.kind = k;
  o.inputs = std::move(in);
  o.outputs = std::move(out);
  o.flops = flops;
  o.bytes_read = bytes_read;
  o.bytes_written = bytes_written;
  return g.add_op(std::move(o));
}

// A file under the system temp folder, removed when the object goes.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text)
      : path_(std::filesystem::temp_directory_path() / ("dlsim_hw_test_" + std::to_string(::getpid()) + "_" + name)) {
    std::ofstream(path_) << text;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace dlsim::testing
