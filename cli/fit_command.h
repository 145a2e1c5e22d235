#pragma once
// `dlsim fit EXPERIMENT.yaml [--json] [--memory-at-overhead 1,5,20] [--max-batch N]`: the largest batch the
// experiment runs at without a simulated out-of-memory on its GPU under its policies (experiment/batch_search.h), with the
// iteration time there; --memory-at-overhead adds, for a swap policy with a memory limit, the least memory it
// reaches within each overhead (percent of the no-swap iteration time). Exit 3 when not even batch 1 fits;
// errors as `run` (cli/run_command.h).
#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dlsim {

struct FitCommandOptions {
  std::string experiment;
  bool json = false;
  std::vector<double> overheads_percent;
  int64_t max_batch = 1 << 16;
};

CLI::App* add_fit_command(CLI::App& app, FitCommandOptions& o);
int run_fit_command(const FitCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
