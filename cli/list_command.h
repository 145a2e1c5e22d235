#pragma once
// `dlsim list`: every model, hardware file and registered implementation (pools, planners, swap and
// concurrency policies, kernel cost models), each with its parameters, defaults and valid values. As text (the
// default), as markdown (--markdown: docs/parameters.md is its output, checked by a CTest test) or as JSON
// (--json, keys in a fixed order).
// Shape: cli/run_command.h.
#include <iosfwd>

namespace CLI {
class App;
}

namespace dlsim {

struct ListCommandOptions {
  bool markdown = false;
  bool json = false;
};

CLI::App* add_list_command(CLI::App& app, ListCommandOptions& o);
int run_list_command(const ListCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
