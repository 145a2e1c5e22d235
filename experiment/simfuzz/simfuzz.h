#pragma once
// The simulation fuzzer: runs a fuzz case (experiment/simfuzz/simfuzz_case.h) through the whole simulator with every checker
// on, and shrinks a failing case to a small one.
//
// A run must end in one of three ways:
// - a result (every iteration completed), or
// - a simulated out-of-memory, or
// - a ConfigError (a value the experiment's checks or a device-dependent check refuse: "rejected").
// Anything else is a violation: another exception (a lowering or executor invariant, the swap checker's
// verdict), a pool invariant broken (CheckedPool, policies/pool/pool_checker.h, wraps the pool on every
// call), blocks still live after a complete run, reserved < live, a negative or non-monotonic time, or a
// sweep key that is not exact over the case's hw_override (experiment/simfuzz/simfuzz_keys.h), swap figures whose
// flags disagree with their numbers (a limit "met" by a target of 0 bytes, a gap to a bound that does not hold), a
// result that differs when the same case runs again (checked on one run in `determinism_every`, except under
// the optimal planner, whose time limit is wall-clock). Assertions,
// hangs and sanitizer reports end the process: `dlsim simfuzz` prints the seed range so they can be found.
#include <cstdint>
#include <functional>
#include <string>

#include "experiment/simfuzz/simfuzz_case.h"

namespace dlsim {

enum class FuzzOutcome { Result, Oom, Rejected, Violation };
const char* to_string(FuzzOutcome o);

struct FuzzRun {
  FuzzOutcome outcome = FuzzOutcome::Result;
  std::string category;  // for a violation: what broke ("pool invariant", "swap check", "exception", ...)
  std::string message;   // the violation's or the rejection's text
  uint64_t events = 0;
  uint64_t ops = 0;
};

struct FuzzRunOptions {
  bool check_determinism = false;  // run the case twice and compare every figure
  std::string file = "<simfuzz>";  // what errors name
};

FuzzRun run_fuzz_case(const FuzzCase& c, const FuzzRunOptions& options = {});

// Delta debugging (Zeller's ddmin over the layers, then one simplification at a time over the experiment:
// hardware overrides, policy parameters, the policies themselves, batch, iterations, input size) until no
// single step keeps `still_fails` true. `max_tests` bounds the runs of the predicate.
FuzzCase shrink_fuzz_case(const FuzzCase& c, const std::function<bool(const FuzzCase&)>& still_fails,
                          int max_tests = 2000);

}  // namespace dlsim
