#pragma once
// The checks a trace read from a file passes before `dlsim compare` sets it beside another or `dlsim calibrate`
// fits to it. A duration is a denominator in both (percentage errors, roofline factors): a measured trace with no
// ops, an op or iteration that takes no time, or one that ends before it starts gives errors of 0 % or a hardware
// file the loader refuses, so it is bad input, named by file and field. And a trace of another plan than the one
// given gives tables of the wrong ops, so it must be the plan's own.
#include <ostream>
#include <string>

#include "program/trace.h"
#include "validate/gpu/program_file.h"

namespace dlsim {

// Times: every op, copy and iteration ends no earlier than it starts. A `measured` trace (the real GPU's: the
// denominators) also needs each op, copy and iteration of a measured iteration (>= 0) to take some time, and,
// unless it ran out of memory, a measured iteration with at least one op. ConfigError naming `file` and the field
// ("ops[12].end").
void check_trace_times(const Trace& t, const std::string& file, bool measured);

// The trace is of `plan`: its program_hash, when it has one, is the plan's program_fingerprint; every op it
// records is an op of the plan's graph; and each complete iteration ran the ops the plan's iteration launches,
// each as many times. A trace without program_hash (written before traces recorded it) is checked by its ops
// alone, and `warn` says so. ConfigError naming `file` and the field.
void check_trace_of_plan(const Trace& t, const std::string& file, const ProgramFile& plan, const std::string& plan_file,
                         std::ostream& warn);

}  // namespace dlsim
