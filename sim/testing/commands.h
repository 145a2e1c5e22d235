#pragma once
// Program commands written by hand in the executor's tests: a kernel launch, a tensor command (alloc, free, copy)
// and an event command, each on a stream (0 unless given).
#include <cstdint>

#include "program/program.h"

namespace dlsim::testing {

inline Command launch(OpId op, int stream = 0) {
  return {CmdKind::Launch, static_cast<int16_t>(stream), op, kNoTensor, -1};
}
inline Command cmd(CmdKind k, TensorId t, int stream = 0) { return {k, static_cast<int16_t>(stream), -1, t, -1}; }
inline Command event(CmdKind k, int32_t e, int stream = 0) {
  return {k, static_cast<int16_t>(stream), -1, kNoTensor, e};
}

}  // namespace dlsim::testing
