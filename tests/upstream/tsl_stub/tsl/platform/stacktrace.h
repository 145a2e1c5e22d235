#pragma once
// Stub: stack traces are only logged at VLOG(4), which the stub logging keeps off.
#include <string>

namespace tsl {
inline std::string CurrentStackTrace() { return "(no stack trace in the dlsim stub)"; }
}  // namespace tsl
