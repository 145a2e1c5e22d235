#include "cli/simfuzz_command.h"

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <ostream>

#include "common/atomic_file.h"
#include "experiment/simfuzz/simfuzz.h"
#include "common/config_error.h"
#include "common/strings.h"

namespace dlsim {

CLI::App* add_simfuzz_command(CLI::App& app, SimfuzzCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "simfuzz", "simulation fuzzer: random models and experiments through the simulator with every checker on");
  cmd->add_option("--runs", o.runs, "cases to run")->check(CLI::Range(int64_t{0}, int64_t{1} << 40))->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed of the first case (case i uses seed + i)")->capture_default_str();
  cmd->add_option("--replay", o.replay, "run saved cases (YAML) instead of drawing new ones")->check(CLI::ExistingFile);
  cmd->add_option("--shrink-to", o.shrink_to, "shrink each violating case and write it to DIR/simfuzz-<seed>.yaml");
  cmd->add_option("--dump", o.dump, "write the case --seed draws to FILE and run nothing");
  cmd->add_option("--max-violations", o.max_violations, "stop after this many violations")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))->capture_default_str();
  cmd->add_option("--determinism-every", o.determinism_every, "run every n-th case twice and compare (0: never)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))->capture_default_str();
  cmd->add_option("--progress", o.progress_every, "print a progress line every n runs (0: never)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_option("--hang-seconds", o.hang_seconds, "a case using more CPU time than this is a hang: print its seed, exit 1 (0: no limit)")
      ->check(CLI::Range(int64_t{0}, int64_t{86400}))->capture_default_str();
  cmd->add_flag("--verbose", o.verbose, "print one line per case before it runs");
  return cmd;
}

namespace {

// The seed in flight, preformatted, for the signal handlers: a hang (the CPU-time timer), an assertion (abort) or a
// crash ends the process, and the one thing worth printing then is which seed did it.
char g_in_flight[160] = "simfuzz: no case running\n";

extern "C" void report_in_flight(int sig) {
  const char* what = sig == SIGPROF ? "simfuzz: HANG (no result within --hang-seconds of CPU time) in " : "simfuzz: CRASH in ";
  if (::write(STDERR_FILENO, what, std::strlen(what)) < 0 ||
      ::write(STDERR_FILENO, g_in_flight, std::strlen(g_in_flight)) < 0) {
  }
  if (sig == SIGPROF) _exit(1);  // a hang is a defect found, as a violation is: exit 1, the seed on stderr
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// Arms (seconds > 0) or disarms the process's CPU-time timer, whose SIGPROF reports a hang.
void set_cpu_timer(double seconds) {
  itimerval t{};
  if (seconds > 0) {
    t.it_value.tv_sec = static_cast<time_t>(seconds);
    t.it_value.tv_usec = static_cast<suseconds_t>((seconds - static_cast<double>(t.it_value.tv_sec)) * 1e6);
  }
  setitimer(ITIMER_PROF, &t, nullptr);
}

void write_case(const FuzzCase& c, const std::string& path, const std::string& note) {
  write_file_atomically(path, "# " + note + "\n# replay: dlsim simfuzz --replay " + path + "\n" + to_yaml_text(c));
}

}  // namespace

int run_simfuzz_command(const SimfuzzCommandOptions& o, std::ostream& out, std::ostream& err) {
  if (!o.dump.empty()) {
    write_case(generate_fuzz_case(o.seed), o.dump, "drawn by dlsim simfuzz --seed " + std::to_string(o.seed));
    return 0;
  }
  if (!o.replay.empty()) {
    int violations = 0;
    for (const std::string& path : o.replay) {
      const FuzzCase c = load_fuzz_case(path);
      FuzzRunOptions ro;
      ro.file = path;
      ro.check_determinism = true;
      const FuzzRun r = run_fuzz_case(c, ro);
      out << path << ": " << to_string(r.outcome);
      if (r.outcome == FuzzOutcome::Violation) out << " [" << r.category << "]";
      if (!r.message.empty()) out << ": " << r.message;
      out << '\n';
      violations += r.outcome == FuzzOutcome::Violation;
    }
    return violations ? 1 : 0;
  }

  const auto start = std::chrono::steady_clock::now();
  std::map<FuzzOutcome, int64_t> counts;
  std::map<std::string, int64_t> rejections;  // by the first words of the message, for the summary
  int64_t violations = 0, done = 0;
  uint64_t events = 0;
  if (!o.shrink_to.empty()) std::filesystem::create_directories(o.shrink_to);
  std::signal(SIGPROF, report_in_flight);
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, report_in_flight);
  for (int64_t i = 0; i < o.runs; ++i) {
    const uint64_t seed = o.seed + static_cast<uint64_t>(i);
    if (o.verbose) err << "simfuzz: seed " << seed << '\n' << std::flush;
    const FuzzCase c = generate_fuzz_case(seed);
    std::snprintf(g_in_flight, sizeof g_in_flight, "seed %llu (dlsim simfuzz --seed %llu --runs 1)\n",
                  static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
    // The limit is CPU time (ITIMER_PROF: user and system), not wall time: a campaign at nice 19 beside builds gets
    // a sliver of a core, and a 2-second case then took over 120 s of wall time (a false hang, seed 12,010,042).
    set_cpu_timer(o.hang_seconds);
    FuzzRunOptions ro;
    ro.check_determinism = o.determinism_every > 0 && seed % static_cast<uint64_t>(o.determinism_every) == 0;
    const FuzzRun r = run_fuzz_case(c, ro);
    set_cpu_timer(0);
    ++done;
    ++counts[r.outcome];
    events += r.events;
    if (r.outcome == FuzzOutcome::Rejected) {
      // "file:line: 'key': message": keep the key, which says what was refused.
      const auto q = r.message.find('\'');
      const auto q2 = q == std::string::npos ? q : r.message.find('\'', q + 1);
      ++rejections[q2 == std::string::npos ? r.message.substr(0, 40) : r.message.substr(q, q2 - q + 1)];
    }
    if (r.outcome == FuzzOutcome::Violation) {
      ++violations;
      out << "VIOLATION seed " << seed << " [" << r.category << "]: " << r.message << '\n';
      if (!o.shrink_to.empty()) {
        const std::string category = r.category;
        const FuzzCase small = shrink_fuzz_case(c, [&](const FuzzCase& s) {
          const FuzzRun x = run_fuzz_case(s);
          return x.outcome == FuzzOutcome::Violation && x.category == category;
        });
        const std::string path = (std::filesystem::path(o.shrink_to) / ("simfuzz-" + std::to_string(seed) + ".yaml")).string();
        write_case(small, path, "shrunk from dlsim simfuzz --seed " + std::to_string(seed) + " --runs 1: [" + category + "] " + r.message);
        out << "  shrunk to " << small.layers.size() << " layers: " << path << '\n';
      }
      if (violations >= o.max_violations) break;
    }
    if (o.progress_every > 0 && done % o.progress_every == 0) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      err << "simfuzz: " << done << " runs (seeds " << o.seed << ".." << seed << "), " << violations << " violations, "
          << fixed(static_cast<double>(done) / s, 1) << " runs/s\n" << std::flush;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out << "runs " << done << " (seeds " << o.seed << ".." << (o.seed + static_cast<uint64_t>(done) - 1) << ")"
      << ": results " << counts[FuzzOutcome::Result] << ", oom " << counts[FuzzOutcome::Oom] << ", rejected "
      << counts[FuzzOutcome::Rejected] << ", violations " << violations << '\n'
      << "events " << events << ", " << fixed(seconds, 1) << " s, " << fixed(static_cast<double>(done) / seconds, 1)
      << " runs/s\n";
  for (const auto& [what, n] : rejections) out << "  rejected " << n << "x: " << what << '\n';
  return violations ? 1 : 0;
}

}  // namespace dlsim
