#pragma once
// Stub of TSL's monitoring metrics: AllocatorRetry reports how long it waited; the replay counts the waits itself.
#include <cstdint>

namespace tsl::metrics {
inline void UpdateBfcAllocatorDelayTime(uint64_t /*delay_usecs*/) {}
}  // namespace tsl::metrics
