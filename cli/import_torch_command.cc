#include "cli/import_torch_command.h"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <vector>

#include "common/config_error.h"
#include "common/strings.h"
#include "experiment/python_script.h"
#include "workloads/torch_step_graph.h"
#include "workloads/training_options.h"

namespace dlsim {

CLI::App* add_import_torch_command(CLI::App& app, ImportTorchCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("import-torch", "record one training step of a PyTorch model (fake tensors, "
                                                     "no GPU) into a trace file that `model:` loads");
  cmd->add_option("SPEC", o.spec, "torchvision:NAME, hf:CONFIG.json or FILE.py:FUNCTION")->required();
  cmd->add_option("--batch", o.batch, "batch size")->required()->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--seq-len", o.seq_len, "tokens per sequence (hf: and token scripts)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--image-size", o.image_size, "image side (torchvision:; default the model's)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--precision", o.precision, choice_names(kPrecisions))
      ->check(CLI::IsMember({"fp32", "mixed-fp16", "mixed-bf16", "bf16"}))
      ->capture_default_str();
  cmd->add_option("--optimizer", o.optimizer, choice_names(kOptimizers))
      ->check(CLI::IsMember({"sgd-momentum", "adam", "adamw"}))
      ->capture_default_str();
  cmd->add_option("--weight-decay", o.weight_decay,
                  "the optimizer's weight_decay (default: its own, 0.01 for adamw, none for sgd-momentum and adam)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            char* end = nullptr;
            const double d = std::strtod(v.c_str(), &end);
            if (end == v.c_str() || *end != '\0' || !(d >= 0 && d < 1)) return "a number in [0, 1), got '" + v + "'";
            return "";
          },
          "in [0, 1)"));
  cmd->add_option("--checkpointing", o.checkpointing,
                  "none, hf (Hugging Face's gradient_checkpointing_enable, non-reentrant) or blocks (each block in "
                  "torch.utils.checkpoint)")
      ->check(CLI::IsMember({"none", "hf", "blocks"}))
      ->capture_default_str();
  cmd->add_option("--python", o.python, "the Python with torch (default: DLSIM_PYTHON, else /usr/bin/python3)");
  cmd->add_option("--out", o.out, "the trace file to write (a name ending in " + std::string(kTorchStepSuffix) + ")")
      ->required();
  return cmd;
}

int run_import_torch_command(const ImportTorchCommandOptions& o, std::ostream& out, std::ostream& /*err*/) {
  if (!is_torch_step_path(o.out))
    throw ConfigError("<command line>", 0, "--out", "'" + o.out + "': a trace file's name ends in " + kTorchStepSuffix +
                                                      " (how an experiment's model: tells it from a config.json)");
  std::vector<std::string> args = {as_operand(o.spec), "--batch=" + std::to_string(o.batch),
                                   "--precision=" + o.precision, "--optimizer=" + o.optimizer,
                                   "--checkpointing=" + o.checkpointing, "--out=" + o.out};
  if (o.seq_len > 0) args.push_back("--seq-len=" + std::to_string(o.seq_len));
  if (o.image_size > 0) args.push_back("--image-size=" + std::to_string(o.image_size));
  if (!o.weight_decay.empty()) args.push_back("--weight-decay=" + o.weight_decay);
  const bool named = !o.python.empty();
  const int rc = run_python_file(named ? std::filesystem::path(o.python) : python_interpreter(),
                                 named ? "--python" : "DLSIM_PYTHON", frontend_dir() / "import_torch.py",
                                 "DLSIM_FRONTEND_DIR", args);
  if (rc != 0) return rc;
  // Loaded as `model:` loads it: a file the loader refuses is the front end's defect, reported as such.
  const TorchStepLoad load = load_torch_step(o.out);
  const Graph& g = load.graph;
  out << "loaded " << o.out << ": " << g.ops().size() << " ops and " << g.tensors().size() << " tensors in dlsim's graph ("
      << load.recorded_ops << " recorded ops: " << load.views << " views and " << load.allocations
      << " bare allocations move no data, " << load.host_ops << " run on host memory); " << load.held_past_last_use
      << " tensors held past their last use to where PyTorch freed them (" << load.held_bytes << " bytes)\n";
  if (!load.traffic_ops.empty()) {
    int64_t n = 0;
    std::vector<std::string> names;
    for (const auto& [name, count] : load.traffic_ops) {
      n += count;
      names.push_back(name + " x" + std::to_string(count));
    }
    out << n << " ops have no kernel model in dlsim and are costed as their memory traffic: " << join(names) << '\n';
  }
  if (!load.other_dtypes.empty()) {
    std::vector<std::string> names;
    for (const auto& [name, count] : load.other_dtypes) names.push_back(name + " x" + std::to_string(count));
    out << "storages of dtypes dlsim does not model, held as bytes: " << join(names) << '\n';
  }
  return 0;
}

}  // namespace dlsim
