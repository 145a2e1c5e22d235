#pragma once
// What every fuzz target shares: the input as text, and the contract. A loader may reject an input with a
// ConfigError (the documented user error: it names file, line and key); any other exception escaping, an abort,
// a sanitizer report, a timeout or running out of memory is a finding, and libFuzzer stops on it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/config_error.h"

namespace dlsim::fuzz {

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs `load` on the input; a ConfigError is an accepted answer, everything else propagates to libFuzzer.
template <typename Load>
int run_loader(Load&& load) {
  try {
    load();
  } catch (const ConfigError&) {
  }
  return 0;
}

}  // namespace dlsim::fuzz
