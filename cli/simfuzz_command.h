#pragma once
// `dlsim simfuzz [--runs N] [--seed S] [--shrink-to DIR] [--max-violations K]`: the simulation fuzzer
// (experiment/simfuzz/simfuzz.h). Draws N cases from seeds S, S+1, ... (experiment/simfuzz/simfuzz_case.h), runs each through the simulator with
// every checker on, prints each violation with its seed and, with --shrink-to, writes the shrunk case to
// DIR/simfuzz-<seed>.yaml. `--replay FILE...` runs saved cases (tests/simfuzz/*.yaml are such). Exit 1 when a
// violation was found, 0 when none, 4 on a hang (a case running past --hang-seconds); errors in a replayed file
// exit 2. A hang or a crash prints the seed in flight.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dlsim {

struct SimfuzzCommandOptions {
  int64_t runs = 100;
  uint64_t seed = 1;
  std::vector<std::string> replay;
  std::string shrink_to;          // folder for shrunk cases ("" = do not shrink)
  std::string dump;               // write the case of --seed to this file and run nothing
  int64_t max_violations = 10;    // stop after this many
  int64_t determinism_every = 16; // run every n-th case twice and compare (0: never)
  int64_t progress_every = 0;     // print a progress line every n runs (0: never)
  int64_t hang_seconds = 300;     // a case that uses more CPU time is a hang (exit 4, its seed on stderr)
  bool verbose = false;           // one line per run
};

CLI::App* add_simfuzz_command(CLI::App& app, SimfuzzCommandOptions& o);
int run_simfuzz_command(const SimfuzzCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
