#include "validate/calibrate/calibrated_block.h"

#include <sstream>

#include "common/config_error.h"

namespace dlsim {
namespace {

const std::string kBegin = "  # [F] begin";
const std::string kEnd = "  # [F] end";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

bool top_level(const std::string& l) { return !l.empty() && l[0] != ' ' && l[0] != '#'; }

}  // namespace

std::string with_calibrated_block(const std::string& text, const std::vector<std::string>& comment,
                              const std::vector<std::pair<std::string, std::string>>& values, const std::string& file) {
  std::vector<std::string> in = lines_of(text), out;
  size_t i = 0;
  while (i < in.size() && in[i].rfind("roofline:", 0) != 0) out.push_back(in[i++]);
  if (i == in.size()) throw ConfigError(file, 0, "roofline", "no top-level roofline: mapping to write fitted values into");
  out.push_back(in[i++]);
  // The roofline block runs to the next top-level key; trailing blank and comment lines belong to what follows.
  size_t end = i;
  while (end < in.size() && !top_level(in[end])) ++end;
  size_t last = end;
  while (last > i && (in[last - 1].empty() || in[last - 1].find_first_not_of(' ') == std::string::npos ||
                      in[last - 1][in[last - 1].find_first_not_of(' ')] == '#') &&
         in[last - 1].rfind(kEnd, 0) != 0)
    --last;
  for (size_t k = i; k < last; ++k) {
    if (in[k].rfind(kBegin, 0) == 0) {
      size_t e = k;
      while (e < last && in[e].rfind(kEnd, 0) != 0) ++e;
      if (e == last) throw ConfigError(file, static_cast<int>(k + 1), "roofline", "an [F] block without its end marker");
      k = e;
      continue;
    }
    out.push_back(in[k]);
  }
  if (!values.empty()) {
    for (size_t c = 0; c < comment.size(); ++c) out.push_back((c == 0 ? kBegin + ": " : "  #   ") + comment[c]);
    if (comment.empty()) out.push_back(kBegin);
    for (const auto& [k, v] : values) out.push_back("  " + k + ": " + v);
    out.push_back(kEnd);
  }
  for (size_t k = last; k < in.size(); ++k) out.push_back(in[k]);
  std::string s;
  for (const std::string& l : out) s += l + "\n";
  return s;
}

}  // namespace dlsim
