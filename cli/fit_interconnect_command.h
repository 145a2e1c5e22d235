#pragma once
// `dlsim fit-interconnect --nccl FILE.json --hw BASE --out NEW.yaml [--allow-cpu] [--description TEXT]`: fits the
// latencies and bus efficiencies of hw/collective_model.h's alpha-beta model to NCCL collectives measured by
// validate/torch/nccl_bandwidth.py (validate/calibrate/interconnect_fit/), prints each parameter, each point's
// residual and leave-one-out prediction, and writes a hardware file that starts from BASE (`base:`) with the fitted
// keys of its `interconnect:` section. A measurement made with gloo on the CPU (the script's CTest check) is
// refused unless --allow-cpu: it says nothing about NCCL's links. Shape: cli/run_command.h.
#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace dlsim {

struct FitInterconnectCommandOptions {
  std::string nccl;         // the measurement (nccl_bandwidth.py's JSON)
  std::string hw;           // the hardware file to start from (a name or a path)
  std::string out;          // the hardware file to write
  std::string description;  // the written file's description ("": BASE's, with the measurement named)
  bool allow_cpu = false;
};

CLI::App* add_fit_interconnect_command(CLI::App& app, FitInterconnectCommandOptions& o);
int run_fit_interconnect_command(const FitInterconnectCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
