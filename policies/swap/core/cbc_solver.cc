#include "policies/swap/core/cbc_solver.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <thread>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

extern char** environ;

namespace dlsim {

namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh private directory for the model and the solver's files, removed when done.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "dlsim-cbc-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw SolverError("cannot make a temporary directory for the CBC model");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

bool on_path(const std::string& prog) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && access((fs::path(d) / prog).c_str(), X_OK) == 0) return true;
  return false;
}

}  // namespace

MilpResult solve_with_cbc(const std::string& lp_model, double time_limit_s, bool relax,
                          const std::map<std::string, double>* start) {
  if (!on_path("cbc"))
    throw SolverError("the CBC solver ('cbc') is not installed: install Debian's coinor-cbc (apt-get install coinor-cbc)");
  TempDir dir;
  const fs::path model = dir.path / "model.lp", sol = dir.path / "solution.txt", log = dir.path / "log.txt";
  {
    std::ofstream out(model);
    out << lp_model;
  }
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", time_limit_s);
  std::vector<std::string> args = {"cbc", model.string(), "threads", "1", "sec", limit};
  if (start) {  // CBC reads a MIP start in its own solution file's form: a status line, then index, name, value
    const fs::path st = dir.path / "start.txt";
    std::ofstream out(st);
    out << "Stopped on iterations - objective value 0\n";
    int i = 0;
    char value[40];
    for (const auto& [name, v] : *start) {
      std::snprintf(value, sizeof value, "%.17g", v);
      out << i++ << ' ' << name << ' ' << value << '\n';
    }
    args.insert(args.end(), {"mipstart", st.string()});
  }
  if (relax) args.push_back("initialSolve");
  else args.push_back("solve");
  args.insert(args.end(), {"solution", sol.string()});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "cbc", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw SolverError("cannot start cbc: " + std::string(std::strerror(rc)));
  // CBC checks its time limit between nodes, not inside the root LP, which on a large MILP runs for minutes: past
  // the limit plus a grace of half of it and 5 s, the solver is stopped and the run goes on without its plan.
  int status = 0;
  const auto start_time = std::chrono::steady_clock::now();
  const double deadline_s = time_limit_s * 1.5 + 5;
  bool killed = false;
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) throw SolverError("cannot wait for cbc: " + std::string(std::strerror(errno)));
    if (!killed && std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count() > deadline_s) {
      kill(pid, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(killed ? 1 : 5));
  }
  if (killed) {
    MilpResult r;
    r.status = "killed";  // no plan and no bound: the caller keeps everything, as for a time limit with no plan
    return r;
  }
  const std::string out = read_all(log);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !fs::exists(sol))
    throw SolverError("cbc failed (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "): " +
                      out.substr(out.size() > 600 ? out.size() - 600 : 0));
  MilpResult r;
  std::ifstream in(sol);
  std::string first;
  std::getline(in, first);
  // "Optimal - objective value 12.5", "Stopped on time - objective value ...", "Infeasible - objective value ..."
  if (first.rfind("Optimal", 0) == 0) r.status = "optimal";
  else if (first.find("Infeasible") != std::string::npos || first.find("infeasible") != std::string::npos) r.status = "infeasible";
  else if (first.find("nbounded") != std::string::npos) r.status = "unbounded";
  else if (first.find("on time") != std::string::npos) r.status = "time-limit";
  else r.status = "stopped";
  std::smatch m;
  if (std::regex_search(first, m, std::regex("objective value\\s+([-+0-9.eE]+)"))) r.objective = std::stod(m[1]);
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string idx, name;
    double v = 0;
    if (ls >> idx) {
      if (idx == "**") ls >> idx;  // CBC marks infeasible rows/columns with **
      if (ls >> name >> v) r.values[name] = v;
    }
  }
  // "Stopped on time (no integer solution - continuous used)": the values are the relaxation's, not a plan.
  r.relaxation_only = first.find("no integer solution") != std::string::npos;
  r.has_solution = (r.status == "optimal" || r.status == "time-limit" || r.status == "stopped") && !r.relaxation_only;
  r.bound = r.objective;
  if (r.status != "optimal" && std::regex_search(out, m, std::regex("Lower bound:\\s+([-+0-9.eE]+)"))) r.bound = std::stod(m[1]);
  r.gap = r.status == "optimal" ? 0.0 : (r.objective - r.bound) / std::max(std::abs(r.objective), 1e-9);
  return r;
}

}  // namespace dlsim
