#include "validate/calibrate/trace_checks.h"

#include <algorithm>
#include <vector>

#include "common/config_error.h"

namespace dlsim {

namespace {

std::string at(const char* array, size_t i) { return std::string(array) + "[" + std::to_string(i) + "]"; }

// end >= start always; end > start too where the duration divides (`positive`).
void check_span(TimeNs start, TimeNs end, bool positive, const std::string& file, const std::string& where,
                const char* what) {
  if (end < start)
    throw ConfigError(file, 0, where + ".end",
                      std::string(what) + " ends before it starts (" + std::to_string(start) + " to " +
                          std::to_string(end) + " ns): not a trace a backend writes");
  if (positive && end == start)
    throw ConfigError(file, 0, where + ".end",
                      std::string("a measured ") + what + " takes no time (starts and ends at " +
                          std::to_string(start) + " ns): its error would be measured against 0; not a trace the GPU "
                          "backend writes");
}

}  // namespace

void check_trace_times(const Trace& t, const std::string& file, bool measured) {
  size_t measured_ops = 0;
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const OpRecord& r = t.ops[i];
    check_span(r.start, r.end, measured && r.iteration >= 0, file, at("ops", i), "op");
    measured_ops += r.iteration >= 0;
  }
  for (size_t i = 0; i < t.copies.size(); ++i) {
    const CopyRecord& c = t.copies[i];
    check_span(c.start, c.end, measured && c.iteration >= 0, file, at("copies", i), "copy");
  }
  for (size_t i = 0; i < t.iterations.size(); ++i) {
    check_span(t.iterations[i].start, t.iterations[i].end, measured, file, at("iterations", i), "iteration");
    // An iteration lasts from when the device could start it (the previous one's end, when later) to its end
    // (compare.h's iteration_durations): it must end after the previous one.
    if (measured && i > 0 && t.iterations[i].end <= t.iterations[i - 1].end)
      throw ConfigError(file, 0, at("iterations", i) + ".end",
                        "ends no later than the iteration before it (" + std::to_string(t.iterations[i].end) +
                            " <= " + std::to_string(t.iterations[i - 1].end) + " ns): it would take no time");
  }
  if (measured && !t.oom && (measured_ops == 0 || t.iterations.empty()))
    throw ConfigError(file, 0, measured_ops == 0 ? "ops" : "iterations",
                      measured_ops == 0 ? "no op record in a measured iteration (iteration >= 0), and the run did not "
                                          "run out of memory: nothing to compare or fit"
                                        : "no measured iteration, and the run did not run out of memory: nothing to "
                                          "compare or fit");
}

void check_trace_of_plan(const Trace& t, const std::string& file, const ProgramFile& plan, const std::string& plan_file,
                         std::ostream& warn) {
  if (!t.program_hash.empty()) {
    const std::string want = program_fingerprint(plan);
    if (t.program_hash != want)
      throw ConfigError(file, 0, "program_hash",
                        "the trace is of another plan: its program_hash " + t.program_hash + " is not " + want +
                            ", the fingerprint of " + plan_file + " (give the plan.json of the same validate run)");
  } else {
    warn << "warning: " << file << " has no program_hash (written before traces recorded it): checked against "
         << plan_file << " by its ops only\n";
  }
  const auto n_ops = static_cast<OpId>(plan.graph.ops().size());
  for (size_t i = 0; i < t.ops.size(); ++i)
    if (t.ops[i].op < 0 || t.ops[i].op >= n_ops)
      throw ConfigError(file, 0, at("ops", i) + ".op",
                        "op " + std::to_string(t.ops[i].op) + " is not an op of " + plan_file + " (which has " +
                            std::to_string(n_ops) + "): the trace is of another plan");
  // What one iteration runs: each op as many times as the program launches it (recomputation launches again).
  std::vector<int> want(static_cast<size_t>(n_ops), 0);
  size_t launches = 0;
  for (const Command& c : plan.program.iteration)
    if ((c.kind == CmdKind::Launch || c.kind == CmdKind::HostCompute) && c.op >= 0 && c.op < n_ops) {
      ++want[static_cast<size_t>(c.op)];
      ++launches;
    }
  // Complete iterations only: a run that ran out of memory stopped inside the one after them.
  const size_t complete = t.iterations.size();
  std::vector<std::vector<OpId>> ran(complete);
  for (const OpRecord& r : t.ops)
    if (r.iteration >= 0 && static_cast<size_t>(r.iteration) < complete) ran[static_cast<size_t>(r.iteration)].push_back(r.op);
  std::vector<int> got(static_cast<size_t>(n_ops));
  for (size_t k = 0; k < complete; ++k) {
    std::fill(got.begin(), got.end(), 0);
    for (OpId op : ran[k]) ++got[static_cast<size_t>(op)];
    if (got == want) continue;
    OpId first = 0;
    while (got[static_cast<size_t>(first)] == want[static_cast<size_t>(first)]) ++first;
    throw ConfigError(file, 0, "ops",
                      "iteration " + std::to_string(k) + " ran " + std::to_string(ran[k].size()) + " ops where " +
                          plan_file + " launches " + std::to_string(launches) + " per iteration (op " +
                          std::to_string(first) + " '" + plan.graph.op(first).name + "': " +
                          std::to_string(got[static_cast<size_t>(first)]) + " times, the plan " +
                          std::to_string(want[static_cast<size_t>(first)]) + "): the trace is of another plan");
  }
}

}  // namespace dlsim
