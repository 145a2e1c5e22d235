#include "cli/calibrate_command.h"

#include <CLI/CLI.hpp>

#include "common/config_error.h"
#include "common/strings.h"
#include "hw/gpu_spec_file.h"
#include "validate/calibrate/harness_commands.h"
#include "validate/calibrate/torch_profile/torch_profile_calibration.h"

namespace dlsim {

CLI::App* add_calibrate_command(CLI::App& app, CalibrateCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "fit the hardware model to validate runs, to torch.profiler traces or to published throughput");
  cmd->add_option("DIR", o.dirs, "validate output folders")->check(CLI::ExistingDirectory);
  cmd->add_option("--hw", o.hw, "hardware to start from: a shipped name (h200) or a hardware file");
  cmd->add_option("--out", o.out, "calibrated hardware file to write");
  cmd->add_flag("--class-model-only", o.class_model_only,
                "write no per-kind correction: ops no table entry serves take the input's per-class model ([F]) even "
                "where the runs measured their kind");
  cmd->add_option("--torch-profile", o.torch_profiles,
                  "instead: fit PyTorch's eager host (and, from GPU kernels, the kernel classes) to torch.profiler "
                  "traces (validate/torch/record_profile.py)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--experiment", o.experiments,
                  "with --torch-profile: the traces' model and batch, one for all or one per trace")
      ->check(CLI::ExistingFile);
  cmd->add_option("--published", o.published.data,
                  "instead: fit per-class efficiencies to published throughput (data/published/*.yaml)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--write-hw", o.published.write_hw, "with --published: write the [F] blocks into the hardware files");
  cmd->add_option("--report", o.published.report, "with --published: write the markdown tables here");
  cmd->add_option("--json", o.published.json, "with --published: write every prediction as JSON here");
  cmd->add_option("--transfer-to", o.transfer_to,
                  "with --published: hardware files without points that take fitted values (comma-separated)");
  cmd->add_option("--transfer-from", o.transfer_from,
                  "with --published: the GPUs whose values they take, first that has each (comma-separated)");
  cmd->add_flag("--occupancy-scaling", o.occupancy_scaling,
                "with --published: scale each kernel's rates by its SM share (hw/roofline.h)");
  cmd->add_flag("--split-memory", o.published.split_memory,
                "with --published: fit normalisation's bandwidth apart from the other memory-bound classes");
  cmd->add_flag("--tie-gemm", o.tie_gemm,
                "with --published: GEMMs without data take the convolutions' value instead of compute_efficiency");
  cmd->add_flag("--fit-model-only", o.fit_model_only,
                "with --published: report the fit's own model instead of full simulations (fast)");
  return cmd;
}

int run_calibrate_command(const CalibrateCommandOptions& o, std::ostream& out, std::ostream& /*err*/) {
  if (!o.torch_profiles.empty()) {
    if (!o.dirs.empty() || !o.published.data.empty())
      throw ConfigError("<command line>", 0, "--torch-profile", "takes no DIR or --published");
    if (o.experiments.empty() || o.hw.empty() || o.out.empty())
      throw ConfigError("<command line>", 0, "--torch-profile", "needs --experiment, --hw and --out");
    return run_torch_profile_calibration({o.torch_profiles, o.experiments, resolve_hw_path(o.hw), o.out}, out);
  }
  if (!o.experiments.empty())
    throw ConfigError("<command line>", 0, "--experiment", "goes with --torch-profile");
  if (!o.published.data.empty()) {
    if (!o.dirs.empty() || !o.hw.empty() || !o.out.empty())
      throw ConfigError("<command line>", 0, "--published", "takes no DIR, --hw or --out (it fits the files its points name)");
    PublishedCalibrationOptions p = o.published;
    p.transfer_to = split(o.transfer_to, ',');
    p.transfer_from = split(o.transfer_from, ',');
    p.occupancy_scaling = o.occupancy_scaling;
    p.tie_gemm_to_conv = o.tie_gemm;
    p.simulate = !o.fit_model_only;
    return run_published_calibration(p, out);
  }
  if (o.dirs.empty() || o.hw.empty() || o.out.empty())
    throw ConfigError("<command line>", 0, "DIR", "calibrate needs validate folders, --hw and --out (or --torch-profile, or --published)");
  return run_calibrate(o.dirs, resolve_hw_path(o.hw), o.out, out, o.class_model_only);
}

}  // namespace dlsim
