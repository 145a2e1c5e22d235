#pragma once
// A Trace as a JSON file (program/trace.h's schema), as both backends write it and calibration and `dlsim compare`
// read it. Errors name the file.
#include <string>

#include "program/trace.h"

namespace dlsim {

// Reads a Trace JSON file; errors name the file.
Trace read_trace_file(const std::string& path);
// The same for JSON text already in memory (`file` names it in errors): the fuzz targets' entry point.
Trace trace_from_text(const std::string& text, const std::string& file);
void write_trace_file(const Trace& t, const std::string& path);

}  // namespace dlsim
