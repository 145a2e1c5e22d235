#pragma once
// `dlsim sweep --shard I/N`: this process runs the points i with i mod N == I - 1 (I from 1 to N), a deterministic
// 1/N of the sweep. Round robin rather than a contiguous block: the last key of `vary` changes fastest, so
// neighbouring points differ in cost in the same way in every shard and the shards take about the same time.
// Made for job arrays: `sbatch --array=1-N` with `--shard $SLURM_ARRAY_TASK_ID/N` (docs/using.md).
#include <cstddef>
#include <optional>
#include <string>

namespace dlsim {

struct Shard {
  size_t index = 1;  // I: 1-based
  size_t count = 1;  // N
  bool owns(size_t point) const { return point % count == index - 1; }
  std::string folder() const;  // "shard-2-of-8", where a shard's runs.csv goes
};

// "I/N" with 1 <= I <= N; anything else is a ConfigError for the option `--shard`.
Shard parse_shard(const std::string& text);

// The shard whose folder `dir` is (its last component is "shard-I-of-N", as Shard::folder() writes it), or none.
std::optional<Shard> shard_of_folder(const std::string& dir);

}  // namespace dlsim
