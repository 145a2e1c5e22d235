#include "program/trace_file.h"

#include <fstream>
#include <iterator>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/config_error.h"
#include "common/input_file.h"

namespace dlsim {

Trace read_trace_file(const std::string& path) {
  return trace_from_text(read_input_file(path), path);
}

Trace trace_from_text(const std::string& text, const std::string& file) {
  try {
    return trace_from_json(nlohmann::json::parse(text));
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number that overflows
    throw ConfigError(file, 0, "", std::string("not valid JSON: ") + e.what());
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const ConfigError*>(&e)) throw;
    throw ConfigError(file, 0, "", e.what());
  }
}

void write_trace_file(const Trace& t, const std::string& path) {
  write_file_atomically(path, to_json(t).dump(1) + "\n");
}

}  // namespace dlsim
