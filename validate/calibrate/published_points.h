#pragma once
// Published single-GPU training throughput, as data (data/published/*.yaml): every number with the file and line
// it was read from in its source repository at a stated commit, and how dlsim runs the same training (model,
// batch, precision, TF32, memory format, fused kernels, optimizer) on which hardware file. `dlsim calibrate
// --published` fits the per-class efficiencies to the points marked `use: fit` (validate/calibrate/published_regression.h) and
// predicts the others.
//
// File layout:
//   source: {repo: NVIDIA/DeepLearningExamples, commit: <40 hex>}
//   points:
//     - id: pt-rn50-a100-tf32          # unique
//       path: PyTorch/.../README.md    # in the source repository at that commit
//       line: 598                      # the table row holding the number
//       setup: PyTorch/.../configs.yml:157   # where batch and options are stated (free text)
//       framework: pytorch             # pytorch | tensorflow | mxnet | paddle | dlsim-harness
//       gpu: a100                      # the fit group: points of one GPU share one fit
//       hw: a100-sxm-80gb              # the hardware file dlsim runs it on
//       model: resnet50
//       batch: 256
//       seq_len: 0                     # optional (0: the model's default)
//       precision: fp32                # as an experiment's keys (docs/using.md: "An experiment")
//       tf32: all
//       memory_format: nchw
//       kernels: eager
//       optimizer: sgd-momentum
//       throughput: 938                # samples per second on one GPU
//       use: fit                       # fit | test (held out) | excluded (with `reason`)
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/training.h"

namespace dlsim {

enum class PointUse : uint8_t { Fit, Test, Excluded };
const char* to_string(PointUse u);

struct PublishedPoint {
  std::string id;
  std::string path;       // in the source repository
  int64_t line = 0;
  std::string setup;
  std::string framework;
  std::string gpu;
  std::string hw;
  std::string model;
  int64_t batch = 0;
  int64_t seq_len = 0;
  TrainingOptions training;
  double throughput = 0;  // samples/s
  PointUse use = PointUse::Fit;
  std::string reason;     // why excluded
  int file_line = 0;      // where the point is in the data file

  double iteration_ms() const { return static_cast<double>(batch) / throughput * 1e3; }
};

struct PublishedData {
  std::string file;
  std::string repo;
  std::string commit;
  std::vector<PublishedPoint> points;
};

// Reads and checks a data file: unknown or missing keys, bad values, unknown models or hardware files, duplicate
// ids are ConfigErrors naming the file, line and key.
PublishedData load_published_points(const std::string& path);

}  // namespace dlsim
