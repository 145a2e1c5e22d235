#include "experiment/hw_override_label.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

namespace dlsim {

namespace {

bool plain(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '+' || c == '-';
  });
}

// A key or a scalar: as written when plain, else in double quotes (", \ and control characters escaped as JSON
// does; other bytes as they are, so that two texts never share a label).
std::string text(const std::string& s) {
  if (plain(s)) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      q += '\\';
      q += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      q += buf;
    } else {
      q += c;
    }
  }
  return q + "\"";
}

// A mapping's entries in key order (keys are scalars: the strict reader refuses any other). The order is sorted
// by index: assigning a YAML::Node (as std::sort would, moving entries) writes into the tree it refers to.
std::vector<std::pair<std::string, YAML::Node>> sorted_entries(const YAML::Node& map) {
  std::vector<std::pair<std::string, YAML::Node>> entries;
  for (const auto& kv : map) entries.emplace_back(kv.first.Scalar(), kv.second);
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return entries[a].first < entries[b].first; });
  std::vector<std::pair<std::string, YAML::Node>> sorted;
  sorted.reserve(entries.size());
  for (size_t i : order) sorted.emplace_back(entries[i].first, entries[i].second);  // copies: handles, not writes
  return sorted;
}

// Any value, whole.
std::string value(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "~";
  if (n.IsScalar()) return text(n.Scalar());
  std::string out;
  if (n.IsSequence()) {
    out = "[";
    for (size_t i = 0; i < n.size(); ++i) out += (i ? "," : "") + value(n[i]);
    return out + "]";
  }
  out = "{";
  bool first = true;
  for (const auto& [k, v] : sorted_entries(n)) {
    out += (first ? "" : ",") + text(k) + "=" + value(v);
    first = false;
  }
  return out + "}";
}

// Nested mappings as dotted paths; a mapping with no entries below the top as {}.
void flatten(const YAML::Node& n, const std::string& prefix, std::string& out) {
  if (n.IsMap() && (n.size() > 0 || prefix.empty())) {
    for (const auto& [k, v] : sorted_entries(n)) flatten(v, prefix.empty() ? text(k) : prefix + "." + text(k), out);
    return;
  }
  out += (out.empty() ? "" : ",") + prefix + "=" + value(n);
}

void legacy_flatten(const YAML::Node& n, const std::string& prefix, std::string& out, bool& exact) {
  if (n.IsMap()) {
    for (const auto& kv : n)
      legacy_flatten(kv.second, prefix.empty() ? kv.first.Scalar() : prefix + "." + kv.first.Scalar(), out, exact);
    return;
  }
  exact = exact && n.IsScalar();
  out += (out.empty() ? "" : ",") + prefix + "=" + (n.IsScalar() ? n.Scalar() : std::string("..."));
}

}  // namespace

std::string hw_override_label(const YAML::Node& overrides) {
  if (!overrides.IsMap() || overrides.size() == 0) return "";
  std::string out;
  flatten(overrides, "", out);
  return out;
}

std::string legacy_hw_override_label(const YAML::Node& overrides, bool& exact) {
  exact = true;
  if (!overrides.IsMap() || overrides.size() == 0) return "";
  std::string out;
  legacy_flatten(overrides, "", out, exact);
  return out;
}

}  // namespace dlsim
