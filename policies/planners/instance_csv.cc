#include "policies/planners/instance_csv.h"

#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/config_error.h"
#include "common/input_file.h"

namespace dlsim {

namespace {

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r')) --b;
  return s.substr(a, b - a);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream ss(line);
  while (std::getline(ss, cell, ',')) cells.push_back(trim(cell));
  if (!line.empty() && line.back() == ',') cells.push_back("");
  return cells;
}

int64_t parse_int(const std::string& text, const std::string& file, int line, const std::string& field) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end)
    throw ConfigError(file, line, field, "expected an integer, got '" + text + "'");
  return v;
}

}  // namespace

std::vector<DsaBuffer> read_instance_csv(std::istream& in, const std::string& name) {
  std::string line;
  int line_no = 0;
  // The header: the first non-blank line.
  std::vector<std::string> header;
  while (header.empty() && std::getline(in, line)) {
    ++line_no;
    if (!trim(line).empty()) header = split(line);
  }
  if (header.empty()) throw ConfigError(name, 0, "", "empty instance: expected a header 'id,lower,upper,size'");
  const std::vector<std::string> needed = {"id", "lower", "upper", "size"};
  std::map<std::string, size_t> column;
  for (size_t c = 0; c < header.size(); ++c)
    if (!column.count(header[c])) column[header[c]] = c;
  for (const auto& f : needed)
    if (!column.count(f))
      throw ConfigError(name, line_no, f, "header lacks column '" + f + "' (needs id,lower,upper,size)");

  std::vector<DsaBuffer> buffers;
  std::set<int64_t> ids;
  // Any placement fits under the sum of the sizes; keeping that sum within 2^63 keeps every offset + size a
  // planner or the checker computes (and the signed arithmetic some planners do on them) from wrapping.
  uint64_t total_size = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty()) continue;
    const auto cells = split(line);
    auto cell = [&](const std::string& f) -> const std::string& {
      const size_t c = column[f];
      if (c >= cells.size())
        throw ConfigError(name, line_no, f, "line has " + std::to_string(cells.size()) + " fields, '" + f +
                                                "' is column " + std::to_string(c + 1));
      return cells[c];
    };
    DsaBuffer b;
    b.id = parse_int(cell("id"), name, line_no, "id");
    b.lower = parse_int(cell("lower"), name, line_no, "lower");
    b.upper = parse_int(cell("upper"), name, line_no, "upper");
    const int64_t size = parse_int(cell("size"), name, line_no, "size");
    if (b.upper <= b.lower)
      throw ConfigError(name, line_no, "upper",
                        "upper (" + std::to_string(b.upper) + ") must exceed lower (" + std::to_string(b.lower) +
                            "): the live interval [lower, upper) is half-open");
    if (size <= 0) throw ConfigError(name, line_no, "size", "size must be positive, got " + std::to_string(size));
    b.size = static_cast<uint64_t>(size);
    if (b.size > kMaxInstanceBytes - total_size)
      throw ConfigError(name, line_no, "size",
                        "the sizes so far sum past " + std::to_string(kMaxInstanceBytes) +
                            " bytes (2^63), the most an instance may hold: a placement's addresses would wrap");
    total_size += b.size;
    if (!ids.insert(b.id).second)
      throw ConfigError(name, line_no, "id", "buffer id " + std::to_string(b.id) + " appears twice");
    buffers.push_back(b);
  }
  return buffers;
}

std::vector<DsaBuffer> read_instance_csv(const std::string& path) {
  std::istringstream in(read_input_file(path));
  return read_instance_csv(in, path);
}

void write_solution_csv(std::ostream& out, const std::vector<DsaBuffer>& buffers,
                        const std::vector<uint64_t>& offsets) {
  if (offsets.size() != buffers.size()) throw std::invalid_argument("write_solution_csv: one offset per buffer");
  out << "id,lower,upper,size,offset\n";
  for (size_t i = 0; i < buffers.size(); ++i)
    out << buffers[i].id << ',' << buffers[i].lower << ',' << buffers[i].upper << ',' << buffers[i].size << ','
        << offsets[i] << '\n';
}

void write_solution_csv(const std::string& path, const std::vector<DsaBuffer>& buffers,
                        const std::vector<uint64_t>& offsets) {
  std::ostringstream text;
  write_solution_csv(text, buffers, offsets);
  write_file_atomically(path, text.str(), "--out");
}

}  // namespace dlsim
