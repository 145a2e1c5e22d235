#pragma once
// The micro-benchmark results dlsim-cuda writes and calibration reads (JSON): PCIe copies by direction, memory
// kind and size (alone and with the other direction busy), cudaMalloc/cudaFree cost by size, kernel launch
// overhead, and independent convolutions on separate streams against the same run serially.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "hw/cost_model.h"

namespace dlsim {

struct CopySample {
  CopyDir dir = CopyDir::HostToDevice;
  bool pinned = true;
  bool bidirectional = false;  // measured while a copy of the same size ran the other way
  uint64_t bytes = 0;
  double ns = 0;  // median of the repetitions
};

struct AllocSample {
  bool is_free = false;  // cudaFree rather than cudaMalloc
  uint64_t bytes = 0;
  double ns = 0;
};

struct ConcurrencySample {
  int convs = 2;         // independent convolutions
  std::string shape;     // e.g. "n32 c256 h14 w14 k256 r3"
  double serial_ns = 0;  // one stream, back to back (device time: CUDA-graph replays, median)
  double parallel_ns = 0;  // one stream each (likewise)
  // The same issued eagerly and timed on the host clock, launch costs included (0 when not measured): with
  // cuDNN 9's legacy calls the host, not the GPU, set these on an H100.
  double eager_serial_ns = 0, eager_parallel_ns = 0;
  double single_ns = 0;  // one of the convolutions alone (device time)
};

struct MicrobenchResults {
  std::string device;
  std::vector<CopySample> copies;
  std::vector<AllocSample> allocs;
  double launch_overhead_ns = 0;  // host time per empty-kernel launch (median over batches)
  std::vector<ConcurrencySample> concurrency;
};

nlohmann::json to_json(const MicrobenchResults& r);
// Throws ConfigError naming `file` and the field.
MicrobenchResults microbench_from_json(const nlohmann::json& j, const std::string& file);
MicrobenchResults read_microbench_file(const std::string& path);
// A CSV of the copy samples (dir,pinned,bidirectional,bytes,ns) for plotting.
std::string copies_csv(const MicrobenchResults& r);

}  // namespace dlsim
