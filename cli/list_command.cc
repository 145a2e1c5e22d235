#include "cli/list_command.h"

#include <CLI/CLI.hpp>

#include <iomanip>
#include <ostream>

#include "hw/cost_model.h"
#include "hw/gpu_spec_file.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/planners/planner.h"
#include "policies/pool/pool_policy.h"
#include "policies/swap/core/swap_policy.h"
#include "workloads/zoo.h"

namespace dlsim {

namespace {

// "  name              description" and one line per parameter:
// "      init_size_mb (int, default 0, valid: >= 0): ...".
template <class Reg>
void list_registry(const Reg& reg, const std::string& title, std::ostream& out) {
  out << title << ":\n";
  for (const auto& e : reg.entries()) {
    out << "  " << std::left << std::setw(18) << e.name << e.description << '\n';
    for (const auto& p : e.params) {
      out << "      " << p.name << " (" << to_string(p.type) << ", default " << to_string(p.default_value);
      if (!p.check.accepts_any()) out << ", valid: " << p.check.text();
      out << "): " << p.description << '\n';
    }
  }
}

}  // namespace

CLI::App* add_list_command(CLI::App& app, ListCommandOptions& /*o*/) {
  return app.add_subcommand("list", "every model, hardware file and policy with its parameters");
}

int run_list_command(const ListCommandOptions& /*o*/, std::ostream& out, std::ostream& /*err*/) {
  out << "models:\n";
  for (const auto& m : model_zoo()) out << "  " << std::left << std::setw(18) << m.name << m.description << '\n';
  out << "  (or any .onnx file)\n";
  out << "hardware (configs/hw):\n";
  for (const auto& h : list_hw_names()) {
    GpuSpec g = load_gpu_spec(resolve_hw_path(h));
    out << "  " << std::left << std::setw(18) << h << g.description << '\n';
  }
  list_registry(pool_registry(), "pools", out);
  list_registry(planner_registry(), "offline planners (dlsim plan, and the planned pool's `planner`)", out);
  list_registry(swap_registry(), "swap policies", out);
  list_registry(concurrency_registry(), "concurrency policies", out);
  list_registry(kernel_model_registry(), "kernel cost models (hardware file: kernel_model, parameters under roofline)", out);
  return 0;
}

}  // namespace dlsim
