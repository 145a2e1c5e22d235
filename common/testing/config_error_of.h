#pragma once
// The message of the ConfigError a call throws, for tests of what a loader refuses (one definition that the tests
// share; many older tests still keep a local copy of it).
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

}  // namespace dlsim::testing
