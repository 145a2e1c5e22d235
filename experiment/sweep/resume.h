#pragma once
// Reading back the rows a sweep already wrote: `dlsim sweep --resume` skips the points they belong to, and
// `dlsim sweep --merge` joins the runs.csv of several shards. A row belongs to a point when every experiment
// field (the columns before `status`, experiment/sweep/sweep.h's runs_csv_key) matches, whatever its position in the file:
// rows are written in the order runs finish, and a sweep file may have been reordered since.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlsim {

struct RunsCsvRows {
  std::string path;
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

// Gives each point its row: wanted[i] is the key of point i (empty: not wanted, e.g. another shard's point).
// Returns, per point, the row that was found. A row whose key is no wanted point's (or is one more time than
// points have it) is a ConfigError naming its file and line: it belongs to another sweep, or the sweep file
// changed; rows are never dropped silently.
std::vector<std::optional<std::string>> match_rows(const std::vector<RunsCsvRows>& files,
                                                   const std::vector<std::string>& wanted, size_t key_columns);

}  // namespace dlsim
