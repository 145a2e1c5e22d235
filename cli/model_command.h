#pragma once
// `dlsim model NAME|FILE.onnx --batch B [--swap POLICY [--param K=V]...] [--json]`, `dlsim model --list`: a
// model's parameters, forward MACs, activation memory kept for the backward pass (and its peak during the
// backward pass, under a checkpointing policy: policies/swap/core/saved_bytes.h) and graph size; or the zoo. Shape:
// cli/run_command.h.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dlsim {

struct ModelCommandOptions {
  std::string model;
  int64_t batch = 0;  // 0: 32, or a recorded step's own batch
  int64_t image_size = 0;
  int64_t seq_len = 0;
  std::string attention;  // "": the model's default; eager or sdpa-flash
  int64_t max_graph_nodes = 1000000;  // kDefaultMaxGraphNodes (workloads/model_options.h)
  std::string optimizer = "sgd-momentum";
  std::string precision = "fp32";
  std::string kernels = "eager";
  std::string memory_format = "nchw";
  std::string swap = "none";        // none, checkpoint or sqrt: the policies that recompute (no simulator here)
  std::vector<std::string> params;  // the swap policy's KEY=VALUE
  bool json = false;
  bool list = false;
  bool parallelism = false;
};

CLI::App* add_model_command(CLI::App& app, ModelCommandOptions& o);
int run_model_command(const ModelCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
