#include "validate/calibrate/kernel_fit/fitted_hw_file.h"

#include <sstream>

#include "hw/fitted/fitted_kernels_yaml.h"

namespace dlsim {
namespace {

bool starts_top_level_key(const std::string& line) {
  return !line.empty() && line[0] != ' ' && line[0] != '\t' && line[0] != '#' && line[0] != '-';
}

constexpr const char* kFitHeader = "# kernel_model: fitted by";

// `text` without a trailing comment block that begins with the header this writer puts above the section.
std::string without_fit_header(const std::string& text) {
  const size_t at = text.rfind(kFitHeader);
  if (at == std::string::npos || (at > 0 && text[at - 1] != '\n')) return text;
  for (size_t i = at; i < text.size();) {
    if (text[i] != '#') return text;  // something other than the header's comment lines follows it
    const size_t end = text.find('\n', i);
    if (end == std::string::npos) break;
    i = end + 1;
  }
  return text.substr(0, at);
}

}  // namespace

std::string fitted_hardware_text(const std::string& base_text, const FittedKernels& fitted, const std::string& comment,
                                 const std::string& description) {
  std::istringstream in(base_text);
  std::string out;
  std::string line;
  // Dropped: kernel_model's entry with its indented lines (and the comments and blank lines among them; those
  // after its last line, before the next key, belong to that key and stay); description's with the indented
  // lines of a value that runs on.
  enum class Dropping { None, Entry, Continuation } dropping = Dropping::None;
  std::string held;  // column-0 comment and blank lines met inside the dropped entry
  while (std::getline(in, line)) {
    const bool top_level = starts_top_level_key(line);
    if (dropping == Dropping::Entry && !top_level) {
      const bool indented = !line.empty() && (line[0] == ' ' || line[0] == '\t');
      if (indented) held.clear();
      else held += line + '\n';
      continue;
    }
    if (top_level) {
      out += held;
      held.clear();
      dropping = line.rfind("kernel_model:", 0) == 0   ? Dropping::Entry
                 : line.rfind("description:", 0) == 0 ? Dropping::Continuation
                                                      : Dropping::None;
      if (dropping == Dropping::Continuation) out += "description: " + fitted_yaml_quoted(description) + '\n';
      if (dropping == Dropping::Entry) out = without_fit_header(out);  // a refit's: its old comment goes too
      if (dropping != Dropping::None) continue;
    }
    const bool indented = !line.empty() && (line[0] == ' ' || line[0] == '\t');
    if (dropping == Dropping::Continuation && indented) continue;
    if (dropping == Dropping::Continuation) dropping = Dropping::None;
    out += line + '\n';
  }
  std::string text = out;
  while (text.size() >= 2 && text[text.size() - 1] == '\n' && text[text.size() - 2] == '\n') text.pop_back();
  text += '\n';
  // The comment wrapped at 116 columns, on word boundaries (a word longer than that keeps its own line).
  std::istringstream c(comment);
  while (std::getline(c, line)) {
    std::istringstream words(line);
    std::string word, out_line;
    while (words >> word) {
      if (!out_line.empty() && out_line.size() + 1 + word.size() > 116) {
        text += "# " + out_line + "\n";
        out_line.clear();
      }
      out_line += (out_line.empty() ? "" : " ") + word;
    }
    text += out_line.empty() ? "#\n" : "# " + out_line + "\n";
  }
  return text + fitted_kernels_to_yaml(fitted);
}

}  // namespace dlsim
