#pragma once
// `dlsim import-torch SPEC --batch B [--seq-len S] [--image-size N] [--precision P] [--optimizer O]
// [--weight-decay W] [--checkpointing C] [--python PYTHON] --out FILE.torchstep.json`: records one training step of
// a PyTorch model on fake tensors (frontend/torch/import_torch.py, run as `dlsim plot` runs matplotlib), then loads
// the trace as an experiment's `model:` would and says what became of it: the graph's size, and the aten ops dlsim
// has no kernel model for (costed as their memory traffic). docs/torch-step.md documents the command and the file.
// Exit 0 written and loaded, 2 bad input (a SPEC that names nothing, a model that raises, data-dependent control
// flow), 3 a package missing (torch, torchvision, transformers), 1 a defect. Shape: cli/run_command.h.
#include <cstdint>
#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace dlsim {

struct ImportTorchCommandOptions {
  std::string spec;
  int64_t batch = 0;
  int64_t seq_len = 0;
  int64_t image_size = 0;
  std::string precision = "fp32";
  std::string optimizer = "sgd-momentum";
  std::string weight_decay;  // "": the optimizer's own default; else a number in [0, 1), checked by the CLI
  std::string checkpointing = "none";
  std::string python;  // "": DLSIM_PYTHON, else /usr/bin/python3
  std::string out;
};

CLI::App* add_import_torch_command(CLI::App& app, ImportTorchCommandOptions& o);
int run_import_torch_command(const ImportTorchCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
