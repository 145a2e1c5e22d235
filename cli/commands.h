#pragma once
// The subcommands of the dlsim binary, each a function of parsed options so that tests can call them.
#include <iosfwd>
#include <string>

namespace dlsim {

struct RunOptions {
  std::string experiment;
  bool json = false;
  std::string chrome_trace;  // write a Chrome/Perfetto trace of the run here
};
int cmd_run(const RunOptions& o, std::ostream& out);

struct ModelOptionsCli {
  std::string model;
  int64_t batch = 32;
  int64_t image_size = 0;
  int64_t seq_len = 0;
  std::string optimizer = "sgd-momentum";
  std::string precision = "fp32";
  bool json = false;
  bool list = false;
};
int cmd_model(const ModelOptionsCli& o, std::ostream& out);

int cmd_list(std::ostream& out);

struct SweepOptionsCli {
  std::string sweep;
  std::string results_dir = "results";
};
int cmd_sweep(const SweepOptionsCli& o, std::ostream& out);

struct ValidateCli {
  std::string experiment;
  std::string out_dir;
  int warmup = 2;
  int iterations = 5;
  bool microbench = false;
  std::string cuda_binary;
};
// Simulates the experiment, writes the plan and the simulated trace to out_dir, runs dlsim-cuda on a real GPU
// and compares. Exit 3 when there is no GPU (or no dlsim-cuda).
int cmd_validate(const ValidateCli& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
