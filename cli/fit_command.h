#pragma once
// `dlsim fit EXPERIMENT.yaml [--json] [--memory-at-overhead 1,5,20] [--max-batch N]`: the largest batch the
// experiment runs at without a simulated out-of-memory on its GPU under its policies (experiment/batch_search.h), with the
// iteration time there; --memory-at-overhead adds, for a swap policy with a memory limit, the least memory it
// reaches within each overhead (percent of the no-swap iteration time). Exit 3 when not even batch 1 fits;
// errors as `run` (cli/run_command.h).
// With --gpus 1,2,4,8 (or --max-gpus N: 1, 2, 4, ... N) and --layouts dp,fsdp,zero1,zero2 (the default), it searches
// layouts instead (experiment/layout_search.h): per layout and GPU count whether the experiment's batch per GPU
// fits, the largest batch per GPU that does, the smallest count each layout fits on and the fastest layout per
// count. Exit 3 when no cell fits, 2 when a cell's run failed (every cell is printed first).
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
  // The layout search: any of the three given turns it on.
  bool layouts_given = false;
  std::vector<std::string> layouts;  // --layouts, split at commas
  bool gpus_given = false;
  std::string gpus;                  // --gpus, as typed: checked by run_fit_command, errors naming the flag
  bool max_gpus_given = false;
  int64_t max_gpus = 0;              // --max-gpus
  bool no_max_batch = false;         // --no-max-batch: only whether the experiment's batch fits
};

CLI::App* add_fit_command(CLI::App& app, FitCommandOptions& o);
int run_fit_command(const FitCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
