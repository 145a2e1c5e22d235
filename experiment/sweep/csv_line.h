#pragma once
// One line of a CSV file as dlsim writes them (RFC 4180 quoting: a field holding a comma, quote or line break
// is quoted, quotes doubled). Used by the sweep's runs.csv: written as rows finish, read back by --resume and
// --merge.
#include <string>
#include <vector>

namespace dlsim {

std::string csv_escape(const std::string& field);
// The fields of one line (no line break at its end). Returns false when a quoted field is not closed.
bool split_csv_line(const std::string& line, std::vector<std::string>& fields);

}  // namespace dlsim
