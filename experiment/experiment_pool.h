#pragma once
// The experiment's pool, built over a device: what the runner, the swap planning's profile and the plan evaluator
// all allocate through. Its own file so that those three depend on it, not on each other.
#include <cstdint>
#include <memory>

#include "experiment/experiment.h"
#include "policies/pool/pool_policy.h"

namespace dlsim {

// "No memory limit": 64 TiB, far above any model, and below VirtualDeviceMemory's address ranges even when a
// pool reserves half the device up front (cnmem): the device the swap planning's profile and the plan evaluator
// run on.
constexpr uint64_t kUnlimitedDeviceBytes = uint64_t{1} << 46;

// The experiment's pool over `device`. A check that needs the device (cnmem's first reservation must be below
// its capacity) fails only here; its ConfigError is given the experiment's file, the pool's line and key.
std::unique_ptr<PoolPolicy> make_pool(const Experiment& e, DeviceMemory& device);

}  // namespace dlsim
