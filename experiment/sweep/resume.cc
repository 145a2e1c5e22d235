#include "experiment/sweep/resume.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "experiment/sweep/csv_line.h"
#include "common/config_error.h"
#include "common/input_file.h"

namespace dlsim {

RunsCsvRows read_runs_csv(const std::string& path, const std::string& header) {
  const std::string text = read_input_file(path);  // a folder, no permission: the path and the reason
  RunsCsvRows out;
  out.path = path;
  std::vector<std::string> header_fields, fields;
  split_csv_line(header, header_fields);
  size_t at = 0;
  int line_number = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    ++line_number;
    if (end == std::string::npos) {  // a write cut short: the last line lacks its line break
      out.torn_last_line = true;
      break;
    }
    const std::string line = text.substr(at, end - at);
    if (line_number == 1) {
      if (line != header)
        throw ConfigError(path, 1, "", "not a runs.csv of this dlsim version (its header differs from `dlsim sweep`'s); "
                                       "it is left as it is: use another --results-dir, or move it away");
    } else {
      if (!split_csv_line(line, fields) || fields.size() != header_fields.size())
        throw ConfigError(path, line_number, "",
                          "malformed row: " + std::to_string(fields.size()) + " fields where the header has " +
                              std::to_string(header_fields.size()));
      out.lines.push_back(line);
      out.line_numbers.push_back(line_number);
    }
    at = end + 1;
    out.intact_bytes = at;
  }
  if (line_number == 0 || (line_number == 1 && out.torn_last_line))
    throw ConfigError(path, 0, "", "empty or without a complete header line; it is left as it is: use another "
                                   "--results-dir, or remove it to start the sweep afresh");
  return out;
}

std::string row_key(const std::string& line, size_t key_columns) {
  std::vector<std::string> fields;
  split_csv_line(line, fields);
  std::string key;
  for (size_t i = 0; i < key_columns && i < fields.size(); ++i) {
    if (i) key += ',';
    key += csv_escape(fields[i]);
  }
  return key;
}

namespace {

// The row with its first `key_columns` fields replaced by `key` (fields already escaped and joined).
std::string with_key(const std::string& line, size_t key_columns, const std::string& key) {
  std::vector<std::string> fields;
  split_csv_line(line, fields);
  std::string out = key;
  for (size_t i = key_columns; i < fields.size(); ++i) out += "," + csv_escape(fields[i]);
  return out;
}

// Points by key, each list in point order.
using PointsByKey = std::map<std::string, std::vector<size_t>>;

// Takes the first point of `points` that has no row yet and that `file` may hold (its shard's), or returns false.
bool take(const std::vector<size_t>& points, const RunsCsvRows& file, std::vector<bool>& taken, size_t& point) {
  for (size_t p : points)
    if (!taken[p] && (!file.shard || file.shard->owns(p))) {
      taken[p] = true;
      point = p;
      return true;
    }
  return false;
}

}  // namespace

std::vector<std::optional<std::string>> match_rows(const std::vector<RunsCsvRows>& files,
                                                   const std::vector<PointKeys>& wanted, size_t key_columns) {
  // Two points with equal fields (a sweep may list a value twice) take the rows with that key in turn.
  PointsByKey points_of, legacy_points_of;
  std::map<std::string, bool> legacy_ambiguous;  // legacy keys that lost information ("..."), of wanted points
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (wanted[i].key.empty()) continue;
    points_of[wanted[i].key].push_back(i);
    // A point whose legacy key is its exact key needs no second entry.
    if (wanted[i].legacy == wanted[i].key) continue;
    if (wanted[i].legacy_exact) legacy_points_of[wanted[i].legacy].push_back(i);
    else legacy_ambiguous[wanted[i].legacy] = true;
  }
  std::vector<std::optional<std::string>> rows(wanted.size());
  std::vector<bool> taken(wanted.size(), false);
  for (const RunsCsvRows& f : files) {
    for (size_t r = 0; r < f.lines.size(); ++r) {
      const std::string key = row_key(f.lines[r], key_columns);
      size_t point = 0;
      auto exact = points_of.find(key);
      if (exact != points_of.end() && take(exact->second, f, taken, point)) {
        rows[point] = f.lines[r];
        continue;
      }
      auto legacy = legacy_points_of.find(key);
      if (legacy != legacy_points_of.end() && take(legacy->second, f, taken, point)) {
        rows[point] = with_key(f.lines[r], key_columns, wanted[point].key);
        continue;
      }
      if (legacy_ambiguous.count(key))
        throw ConfigError(f.path, f.line_numbers[r], "",
                          "row written by an older dlsim, whose key wrote each list in hw_override as '...': it "
                          "cannot be told which point it belongs to; nothing was overwritten: move the file away "
                          "(or use another --results-dir) and run these points again");
      const bool known = exact != points_of.end() || legacy != legacy_points_of.end();
      throw ConfigError(f.path, f.line_numbers[r], "",
                        !known ? "row matches no point of this sweep (run with another sweep file, or the file changed "
                                 "since); nothing was overwritten"
                        : f.shard ? "row repeats a point that already has a row, or belongs to a point of another "
                                    "shard than " + f.shard->folder() + "; nothing was overwritten"
                                  : "row repeats a point that already has a row; nothing was overwritten");
    }
  }
  return rows;
}

}  // namespace dlsim
