#pragma once
// Instance files in the MiniMalloc / idealloc CSV format: a header naming at least id, lower, upper, size (in
// any order; other columns such as offset are ignored), then one buffer per line, live over [lower, upper).
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "policies/planners/dsa_instance.h"

namespace dlsim {

// The most bytes an instance's sizes may sum to (2^63): no placement of it can then wrap a 64-bit address.
inline constexpr uint64_t kMaxInstanceBytes = uint64_t{1} << 63;

// Throws ConfigError(file, line, field) for a missing file or header column, a malformed or missing number,
// upper <= lower, size <= 0, sizes summing past kMaxInstanceBytes, or a repeated id. Blank lines are skipped.
std::vector<DsaBuffer> read_instance_csv(const std::string& path);
std::vector<DsaBuffer> read_instance_csv(std::istream& in, const std::string& name);

// Writes `id,lower,upper,size,offset`, one row per buffer in input order.
void write_solution_csv(std::ostream& out, const std::vector<DsaBuffer>& buffers,
                        const std::vector<uint64_t>& offsets);
void write_solution_csv(const std::string& path, const std::vector<DsaBuffer>& buffers,
                        const std::vector<uint64_t>& offsets);

}  // namespace dlsim
