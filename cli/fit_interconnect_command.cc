#include "cli/fit_interconnect_command.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <ostream>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/config_error.h"
#include "common/strings.h"
#include "hw/gpu_spec_file.h"
#include "hw/hardware.h"
#include "hw/hardware_base.h"
#include "validate/calibrate/interconnect_fit/interconnect_fit.h"
#include "validate/calibrate/interconnect_fit/interconnect_fit_report.h"
#include "validate/calibrate/interconnect_fit/nccl_measurements.h"

namespace dlsim {

CLI::App* add_fit_interconnect_command(CLI::App& app, FitInterconnectCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "fit-interconnect",
      "fit the collective model's latencies and bus efficiencies to measured NCCL collectives and write a hardware "
      "file with them");
  cmd->add_option("--nccl", o.nccl, "the measurement (validate/torch/nccl_bandwidth.py's JSON)");
  cmd->add_option("--hw", o.hw, "the hardware file to start from (a configs/hw name or a path)");
  cmd->add_option("--out", o.out, "the hardware file to write");
  cmd->add_option("--description", o.description,
                  "the written file's description (default: BASE's, saying its interconnect is fitted)");
  cmd->add_flag("--allow-cpu", o.allow_cpu, "fit a gloo/CPU measurement too (tests only: it is no NCCL link)");
  return cmd;
}

namespace {

std::string fit_interconnect_command_line(const FitInterconnectCommandOptions& o) {
  std::string c = "dlsim fit-interconnect --nccl " + o.nccl + " --hw " + o.hw + " --out " + o.out;
  if (o.allow_cpu) c += " --allow-cpu";
  if (!o.description.empty()) c += " --description '" + o.description + "'";
  return c;
}

}  // namespace

int run_fit_interconnect_command(const FitInterconnectCommandOptions& o, std::ostream& out, std::ostream& /*err*/) {
  if (o.nccl.empty()) throw ConfigError("<command line>", 0, "--nccl", "give the measurement to fit");
  if (o.hw.empty()) throw ConfigError("<command line>", 0, "--hw", "give the hardware file to start from");
  if (o.out.empty()) throw ConfigError("<command line>", 0, "--out", "give the hardware file to write");
  const NcclMeasurements m = load_nccl_measurements(o.nccl);
  if ((m.backend != "nccl" || m.device != "cuda") && !o.allow_cpu)
    throw ConfigError(m.file, 0, "backend",
                      "measured with " + m.backend + " on the " + m.device +
                          ", not NCCL on GPUs: it says nothing about the links (--allow-cpu fits it anyway)");
  const std::string hw_path = resolve_hw_path(o.hw);
  const Hardware base = load_hardware(hw_path);
  if (!base.spec.interconnect)
    throw ConfigError(hw_path, 0, "interconnect",
                      "has no interconnect: section: its link rates are what the efficiencies are fitted against");
  bool spans_nodes = false;
  for (const NcclPoint& p : m.points) spans_nodes = spans_nodes || p.ranks > m.gpus_per_node;
  if (spans_nodes && !base.spec.interconnect->inter)
    throw ConfigError(hw_path, 0, "interconnect.inter_node",
                      "is missing, and " + m.file + " spans " + std::to_string(m.nodes) +
                          " nodes: the network's link rate is needed to fit its efficiency");
  if (base.spec.node && base.spec.node->gpus_per_node != m.gpus_per_node)
    out << "note: " << m.file << " was measured on nodes of " << m.gpus_per_node << " GPUs, " << hw_path
        << " describes nodes of " << base.spec.node->gpus_per_node << " (its node: section is kept)\n";

  InterconnectFit fit;
  try {
    fit = fit_interconnect(m.points, m.gpus_per_node, *base.spec.interconnect);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(hw_path, 0, "interconnect", e.what());
  }
  bool any = false;
  for (const FittedLinkParam& p : fit.params) any = any || p.fitted;
  if (!any) throw ConfigError(m.file, 0, "results", "constrains none of the interconnect's parameters");

  out << "dlsim fit-interconnect: " << m.points.size() << " points of " << m.file
      << (m.summary.empty() ? "" : " (" + m.summary + ")") << ", starting from " << hw_path << "\n"
      << interconnect_fit_report(fit);
  const std::string comment =
      "interconnect: fitted by `" + fit_interconnect_command_line(o) + "` to " + std::to_string(m.points.size()) +
      " NCCL collectives of " + m.file + (m.summary.empty() ? "" : " (" + m.summary + ")") +
      ".\nLeast squares of relative time residuals in hw/collective_model.h's form: RMS " +
      fixed(100 * fit.rms_fitted, 2) + " % (the base file's " + fixed(100 * fit.rms_start, 2) +
      " %), leave-one-out " + fixed(100 * fit.rms_loo, 2) +
      " %.\nKeys not written here (link rates, those the data do not constrain) are the base file's.";
  const std::string description =
      !o.description.empty() ? o.description
                             : base.spec.description + "; interconnect fitted to NCCL measurements (" + m.file + ")";
  const std::string text =
      fitted_interconnect_yaml(fit, comment, hardware_base_reference(hw_path, o.out), description);
  write_file_atomically(o.out, text, "--out");
  try {
    load_hardware(o.out);  // what is written must load
  } catch (const ConfigError&) {
    std::filesystem::remove(o.out);
    throw;
  }
  out << "wrote " << o.out << "\n";
  return 0;
}

}  // namespace dlsim
