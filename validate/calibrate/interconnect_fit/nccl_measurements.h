#pragma once
// The measurements `dlsim fit-interconnect --nccl FILE.json` fits: validate/torch/nccl_bandwidth.py's JSON (format
// dlsim-nccl-bandwidth, version 1), NCCL's all-reduce, all-gather and reduce-scatter times by size and group size,
// timed as nccl-tests times them. S (`bytes`) is nccl-tests' size: the all-reduce buffer, the whole gathered array
// for all-gather and reduce-scatter (hw/collective_model.h's convention).
//
//   {"format": "dlsim-nccl-bandwidth", "version": 1, "backend": "nccl", "device": "cuda",
//    "world_size": 8, "gpus_per_node": 8, "nodes": 1, "devices": [...], "versions": {...}, ...,
//    "results": [{"collective": "all_reduce", "ranks": 8, "bytes": 1048576, "time_us": 31.2,
//                 "algbw_gb_s": 33.6, "busbw_gb_s": 58.8, ...}, ...]}
//
// Read strictly: an unknown, missing, ill-typed or out-of-range field is a ConfigError naming the file and the
// field (results[3].time_us); a row's algbw_gb_s, when given, must agree with bytes / time_us (a unit slip shows).
#include <cstdint>
#include <string>
#include <vector>

#include "hw/collective_model.h"

namespace dlsim {

struct NcclPoint {
  CollectiveKind kind = CollectiveKind::AllReduce;
  int ranks = 2;
  uint64_t bytes = 0;
  double time_us = 0;  // the median time of one call
  size_t row = 0;      // its index in `results`
};

struct NcclMeasurements {
  std::string file;
  std::string backend;  // nccl, gloo
  std::string device;   // cuda, cpu
  int world_size = 0;
  int gpus_per_node = 0;  // ranks on one node (torchrun's LOCAL_WORLD_SIZE)
  int nodes = 0;
  std::string summary;    // devices, versions, date, for the written file's comment
  std::vector<NcclPoint> points;
};

NcclMeasurements nccl_measurements_from_text(const std::string& text, const std::string& file);
NcclMeasurements load_nccl_measurements(const std::string& path);

}  // namespace dlsim
