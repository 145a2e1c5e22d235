#include "policies/swap/core/cbc_solver.h"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#include "common/child_process.h"
#include "common/temp_dir.h"

namespace dlsim {

namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

MilpResult solve_with_cbc(const std::string& lp_model, double time_limit_s, bool relax,
                          const std::map<std::string, double>* start, int max_nodes) {
  if (find_program("cbc").empty())
    throw SolverError("the CBC solver ('cbc') is not installed: install Debian's coinor-cbc (apt-get install coinor-cbc)");
  // The model, the start and the solution in a folder removed however this ends (a signal included: the solver
  // is killed with dlsim and its folder removed, common/child_process.h).
  std::optional<TempDir> made;
  try {
    made.emplace("dlsim-cbc");
  } catch (const std::runtime_error& e) {
    throw SolverError(std::string("cannot make a temporary folder for the CBC model: ") + e.what());
  }
  const TempDir& dir = *made;
  const fs::path model = dir.path() / "model.lp", sol = dir.path() / "solution.txt", log = dir.path() / "log.txt";
  {
    std::ofstream out(model);
    out << lp_model;
  }
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", time_limit_s);
  // The limit in elapsed seconds (CBC counts CPU seconds by default, which on a busy machine is a fraction of the wait).
  std::vector<std::string> args = {"cbc", model.string(), "threads", "1", "timeMode", "elapsed", "sec", limit};
  if (start) {  // CBC reads a MIP start in its own solution file's form: a status line, then index, name, value
    const fs::path st = dir.path() / "start.txt";
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
  if (max_nodes > 0 && !relax) args.insert(args.end(), {"maxNodes", std::to_string(max_nodes)});
  if (relax) args.push_back("initialSolve");
  else args.push_back("solve");
  args.insert(args.end(), {"solution", sol.string()});
  std::optional<ChildProcess> cbc;
  try {
    cbc.emplace(args, log.string());
  } catch (const ChildStartError& e) {
    throw SolverError(std::string("cannot start cbc: ") + e.what());
  }
  // CBC checks its time limit between nodes, not inside the root LP, which on a large MILP runs for minutes: past
  // the limit plus a grace of half of it and 5 s, the solver is stopped and the run goes on without its plan.
  const auto start_time = std::chrono::steady_clock::now();
  const double deadline_s = time_limit_s * 1.5 + 5;
  bool killed = false;
  std::optional<int> ended;
  while (!(ended = cbc->try_wait())) {
    if (!killed && std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count() > deadline_s) {
      cbc->kill();
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(killed ? 1 : 5));
  }
  const int status = *ended;
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
