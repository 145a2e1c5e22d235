#pragma once
// The ConfigError a call throws, or its message, for tests of what a loader refuses (one definition that the tests
// share; many older tests still keep a local copy of it).
#include <optional>
#include <string>

#include "common/config_error.h"

namespace dlsim::testing {

// what() of the ConfigError `read` throws: "" when it throws none, so that a check for a message then fails.
template <class F>
std::string config_error_of(F read) {
  try {
    read();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// The ConfigError `read` throws, for checking where it points (key(), line()); none when it throws none.
template <class F>
std::optional<ConfigError> thrown_config_error(F read) {
  try {
    read();
  } catch (const ConfigError& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace dlsim::testing
