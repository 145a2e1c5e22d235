#pragma once
// `dlsim plot-memory EXPERIMENT.yaml|SNAPSHOT.pickle --out FIG.png|FIG.svg [--out ...] [--title T]`: the live
// bytes of a run over time, stacked by tensor kind (weights, activations, gradients, optimizer state,
// workspace, inputs), and the bytes its pool reserves, each peak marked. An experiment is simulated first and its
// memory snapshot (experiment/snapshot/memory_snapshot.h) drawn; a snapshot file (dlsim's, or PyTorch's
// torch.cuda.memory._snapshot() with its trace recorded) is drawn as it is. Drawn by figures/plot_memory.py.
// Exit 0 drawn, 2 bad input, 3 matplotlib missing.
#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dlsim {

struct PlotMemoryCommandOptions {
  std::string input;
  std::vector<std::string> out;
  std::string title;
};

CLI::App* add_plot_memory_command(CLI::App& app, PlotMemoryCommandOptions& o);
int run_plot_memory_command(const PlotMemoryCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
