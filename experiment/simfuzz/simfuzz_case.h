#pragma once
// One case of the simulation fuzzer (`dlsim simfuzz`, experiment/simfuzz/simfuzz.h): a random but valid model and a random
// experiment around it, drawn from a seed, and written to / read back from a YAML file so that a failing case
// can be replayed and committed as a regression test (tests/simfuzz/*.yaml).
//
// The model is a list of layers applied to a running tensor x (and to earlier tensors, for residual adds,
// concats, products and fan-out), built through ModelBuilder and turned into a training graph like any zoo
// model. A layer that does not fit x's shape (a convolution on a matrix) is skipped, so that every subset of a
// case's layers is again a valid model: the shrinker (experiment/simfuzz/simfuzz.h) deletes layers freely.
//
// The experiment is an experiment mapping (experiment/experiment.h) without `model`: batch, hw, hw_override, the pool,
// swap and concurrency policies with parameters, iterations, precision, ... It is read by experiment_from_yaml,
// so every drawn value passes the same checks a user's file does.
//
// File form:
//   seed: 17
//   input: [cnn, 3, 32, 32]          # cnn: channels, height, width; mlp: features; seq: length, hidden
//   classes: 10
//   layers: [[conv, 16, 3], [bn], [relu], [add, 2], [flatten], [linear, 64]]
//   experiment: {batch: 8, hw: h100-sxm, pool: cnmem, swap: none, concurrency: serial, iterations: 2}
#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "experiment/experiment.h"
#include "workloads/graph.h"

namespace dlsim {

// A deterministic random source (SplitMix64): the same seed draws the same case on every platform, which the
// standard distributions do not promise.
class FuzzRandom {
 public:
  explicit FuzzRandom(uint64_t seed) : state_(seed) {}
  uint64_t next();
  int64_t uniform(int64_t lo, int64_t hi);  // inclusive
  double unit();                            // [0, 1)
  bool chance(double p) { return unit() < p; }
  double log_uniform(double lo, double hi);  // lo, hi > 0
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(uniform(0, static_cast<int64_t>(v.size()) - 1))];
  }

 private:
  uint64_t state_;
};

struct FuzzLayer {
  std::string kind;  // conv, conv_s2, bn, relu, gelu, dropout, maxpool, gap, flatten, linear, layernorm,
                     // softmax, add, mul, concat, attn, branch
  int64_t a = 0;     // out channels / features, or how far back the other operand is
  int64_t b = 0;     // kernel size
  bool operator==(const FuzzLayer&) const = default;
};

// The layer kinds a case may hold, for errors and the generator.
const std::vector<std::string>& fuzz_layer_kinds();

struct FuzzCase {
  uint64_t seed = 0;
  std::string input = "mlp";          // cnn, mlp, seq
  std::vector<int64_t> input_dims;    // without the batch
  int64_t classes = 10;
  std::vector<FuzzLayer> layers;
  YAML::Node experiment;              // an experiment mapping without `model`

  // A copy owns its experiment: yaml-cpp's Node copies share one tree, and assigning to a shared Node writes
  // into the tree rather than rebinding it, so a shrinking step would edit the case it came from.
  FuzzCase() = default;
  FuzzCase(const FuzzCase& o);
  FuzzCase& operator=(const FuzzCase& o);
  FuzzCase(FuzzCase&&) = default;
  FuzzCase& operator=(FuzzCase&& o) noexcept;
};

// The case a seed draws: layers, shapes and dtypes; a GPU file with random capacities, rates and latencies, and
// sometimes measured tables (lists, with signatures holding the characters a sweep key must quote) (hw_override);
// a swap limit_fraction down to the smallest positive double, sometimes; a pool, a swap and a concurrency policy from their registries with parameters drawn from their
// declared ParamSpec ranges, so that a policy registered later is fuzzed without a change here.
FuzzCase generate_fuzz_case(uint64_t seed);

// The forward graph of the case's layers at `batch`, with the experiment's precision and kernel choices.
Graph build_fuzz_forward(const FuzzCase& c, const TrainingOptions& training, int64_t batch);

// The case's experiment as experiment_from_yaml reads it (errors name `file`, the line and the key); its model
// is "simfuzz:<seed>", built by build_fuzz_forward.
Experiment fuzz_experiment(const FuzzCase& c, const std::string& file);

YAML::Node to_yaml(const FuzzCase& c);
std::string to_yaml_text(const FuzzCase& c);
FuzzCase fuzz_case_from_yaml(const YAML::Node& n, const std::string& file);
FuzzCase load_fuzz_case(const std::string& path);

}  // namespace dlsim
