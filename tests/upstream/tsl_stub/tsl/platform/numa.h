#pragma once
// Stub of tsl/platform/numa.h: only the "no NUMA affinity" constant allocator.h names.
namespace tsl::port {
constexpr int kNUMANoAffinity = -1;
}  // namespace tsl::port
