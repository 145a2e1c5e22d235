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

std::vector<std::optional<std::string>> match_rows(const std::vector<RunsCsvRows>& files,
                                                   const std::vector<std::string>& wanted, size_t key_columns) {
  // Points by key, in sweep order: two points with equal fields (a sweep may list a value twice) take the rows
  // with that key in turn.
  std::map<std::string, std::vector<size_t>> points_of;
  for (size_t i = wanted.size(); i-- > 0;)
    if (!wanted[i].empty()) points_of[wanted[i]].push_back(i);
  std::vector<std::optional<std::string>> rows(wanted.size());
  for (const RunsCsvRows& f : files) {
    for (size_t r = 0; r < f.lines.size(); ++r) {
      auto it = points_of.find(row_key(f.lines[r], key_columns));
      if (it == points_of.end() || it->second.empty())
        throw ConfigError(f.path, f.line_numbers[r], "",
                          it == points_of.end()
                              ? "row matches no point of this sweep (run with another sweep file, or the file changed "
                                "since); nothing was overwritten"
                              : "row repeats a point that already has a row; nothing was overwritten");
      rows[it->second.back()] = f.lines[r];
      it->second.pop_back();
    }
  }
  return rows;
}

}  // namespace dlsim
