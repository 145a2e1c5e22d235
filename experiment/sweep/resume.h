#pragma once
// Reading back the rows a sweep already wrote: `dlsim sweep --resume` skips the points they belong to, and
// `dlsim sweep --merge` joins the runs.csv of several shards. A row belongs to a point when every experiment
// field (the columns before `status`, experiment/sweep/sweep.h's runs_csv_key) matches, whatever its position in the file:
// rows are written in the order runs finish, and a sweep file may have been reordered since.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiment/sweep/shard.h"

namespace dlsim {

struct RunsCsvRows {
  std::string path;
  // The shard that wrote the file, when it lies in a shard's folder (".../shard-2-of-8/runs.csv"): its rows are
  // matched only to that shard's points, so that points with equal keys cannot take each other's rows.
  std::optional<Shard> shard;
  std::vector<std::string> lines;  // complete data rows, in file order (no line breaks)
  std::vector<int> line_numbers;   // each row's 1-based line in the file
  uint64_t intact_bytes = 0;       // the bytes up to the last line break: what --resume keeps
  bool torn_last_line = false;     // a last line without a line break (a write cut short by a kill) was dropped
};

// Reads `path`; a ConfigError when it cannot be read, is empty, or its first line is not `header` (a runs.csv of
// another dlsim version, or another file altogether), or a row does not have the header's number of fields.
RunsCsvRows read_runs_csv(const std::string& path, const std::string& header);

// The experiment fields of a row (its first `key_columns` fields), as runs_csv_key writes them.
std::string row_key(const std::string& line, size_t key_columns);

// What a point's rows may carry as their key: its exact key (runs_csv_key; empty: the point is not wanted, e.g.
// another shard's) and the key an older dlsim wrote for it (runs_csv_legacy_key), usable only when `legacy_exact`.
struct PointKeys {
  std::string key;
  std::string legacy;
  bool legacy_exact = false;
};

// Gives each point its row. Returns, per point, the row that was found; a row found by its legacy key comes back
// with its key columns rewritten to the exact key, so that a resumed or merged runs.csv holds one form. Points
// with equal keys take the rows with that key in point order (within a shard's file: that shard's points only).
// A row whose key is no wanted point's (or is one more time than points have it), or whose legacy key cannot
// tell the points apart, is a ConfigError naming its file and line: it belongs to another sweep, or the sweep
// file changed; rows are never dropped silently.
std::vector<std::optional<std::string>> match_rows(const std::vector<RunsCsvRows>& files,
                                                   const std::vector<PointKeys>& wanted, size_t key_columns);

}  // namespace dlsim
