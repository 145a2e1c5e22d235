#pragma once
// Simulated against measured: per-op and per-iteration error tables (MAPE), peak reserved memory error, copy
// times. Both traces are in the one schema (program/trace.h); only measured iterations (iteration >= 0) count.
// An error is relative to the measured figure, so where that is not positive (an op, iteration or copy that took
// no time, no reserved memory) there is no error to give: it is left out and counted as not comparable, and a
// summary over nothing comparable is absent (printed "n/a", null in JSON), never 0 %. `dlsim compare` refuses
// such traces before they get here (validate/calibrate/trace_checks.h).
#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "program/trace.h"
#include "workloads/graph.h"

namespace dlsim {

struct OpError {
  OpId op = -1;
  std::string name;
  std::string kind;
  double sim_ns = 0;   // mean duration over the iterations
  double real_ns = 0;
  double ape = 0;      // |sim - real| / real, percent
};

struct IterationError {
  int iteration = 0;
  double sim_ns = 0, real_ns = 0, ape = 0;
};

struct CopyError {
  bool to_host = true;
  size_t sim_count = 0, real_count = 0;
  double sim_mean_ns = 0, real_mean_ns = 0;
  std::optional<double> ape;  // none: no measured copy of this direction took time
};

struct Comparison {
  std::vector<OpError> ops;             // ops measured in both traces (measured duration > 0), in op order
  std::optional<double> op_mape;        // none: no op comparable
  size_t ops_not_comparable = 0;        // in both traces, but measured at 0 ns or less
  std::vector<IterationError> iterations;  // iterations present in both (measured duration > 0)
  std::optional<double> iteration_mape;
  size_t iterations_not_comparable = 0;
  uint64_t sim_peak_reserved = 0, real_peak_reserved = 0;
  std::optional<double> peak_reserved_error;  // (sim - real) / real, percent (signed); none: real is 0
  std::vector<CopyError> copies;        // device->host, then host->device, when either trace has some
  bool sim_oom = false, real_oom = false;
};

// Each iteration's duration as both backends can state it: from when the device could start it (its start, or
// the previous iteration's end when that is later) to its end. The simulated host issues ahead, so a simulated
// iteration "starts" while the previous one still runs; the GPU harness synchronises before each iteration. Their
// raw spans are not comparable, these are (in steady state both are the period of the iteration).
std::vector<double> iteration_durations(const Trace& t);

Comparison compare_traces(const Trace& sim, const Trace& real, const Graph& g);

// Numbers a simulated trace of `warmup` + N iterations as dlsim-cuda numbers its own: the warm-up iterations'
// records get iteration -2 and leave the iteration list, the measured ones count from 0. Records of setup (-1)
// and teardown keep their numbers.
void number_as_measured(Trace& t, int warmup);
// Tables: summary, then the `top` ops with the largest absolute error (all ops when top == 0).
void print_comparison(const Comparison& c, std::ostream& out, size_t top = 20);
// The whole comparison as one JSON object (summary figures, every iteration, every copy kind, every op), and a
// per-op-kind summary: summed simulated and measured time per iteration, and the MAPE over that kind's ops.
nlohmann::json comparison_to_json(const Comparison& c);

}  // namespace dlsim
