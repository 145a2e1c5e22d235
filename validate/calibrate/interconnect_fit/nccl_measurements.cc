#include "validate/calibrate/interconnect_fit/nccl_measurements.h"

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "common/config_error.h"
#include "common/json_fields.h"
#include "common/input_file.h"
#include "common/strings.h"

namespace dlsim {
namespace {

using json = nlohmann::json;

constexpr int kNcclMaxRanks = 1 << 20;
constexpr int64_t kNcclMaxBytes = int64_t{1} << 50;
constexpr double kNcclMaxUs = 1e9;  // a collective of over a quarter of an hour is a unit mistake

const std::vector<std::string> kNcclTopFields = {
    "format", "version",   "script",  "command", "date",   "backend", "device",    "timer",     "dtype",
    "world_size", "gpus_per_node", "nodes", "devices", "versions", "env", "method", "budget_s", "elapsed_s",
    "truncated", "skipped", "results"};
const std::vector<std::string> kNcclRowFields = {"collective", "api",        "ranks",      "bytes", "count",
                                          "time_us",    "time_us_min", "time_us_max", "algbw_gb_s",
                                          "busbw_gb_s", "iters",      "reps"};

CollectiveKind nccl_collective_of(const JsonFields& f) {
  const std::string c = f.text("collective");
  if (c == "all_reduce") return CollectiveKind::AllReduce;
  if (c == "all_gather") return CollectiveKind::AllGather;
  if (c == "reduce_scatter") return CollectiveKind::ReduceScatter;
  f.fail("collective", "unknown collective '" + c + "'; valid: all_reduce, all_gather, reduce_scatter");
}

NcclPoint nccl_read_row(const json& j, const NcclMeasurements& m, size_t index) {
  const JsonFields f(j, m.file, "results[" + std::to_string(index) + "]");
  if (!j.is_object()) f.fail("", "must be an object {\"collective\": ..., \"ranks\": ..., \"bytes\": ..., ...}");
  f.allow_only(kNcclRowFields);
  NcclPoint p;
  p.row = index;
  p.kind = nccl_collective_of(f);
  p.ranks = static_cast<int>(f.integer("ranks", 2, m.world_size));
  if (p.ranks > m.gpus_per_node && p.ranks % m.gpus_per_node != 0)
    f.fail("ranks", std::to_string(p.ranks) + " ranks are not whole nodes of " + std::to_string(m.gpus_per_node) +
                        " (gpus_per_node): the script measures groups of the first ranks");
  p.bytes = static_cast<uint64_t>(f.integer("bytes", 1, kNcclMaxBytes));
  p.time_us = f.number("time_us", 0, kNcclMaxUs, true);
  if (j.contains("algbw_gb_s")) {
    const double given = f.number("algbw_gb_s", -1, 1e9, true);
    const double expected = static_cast<double>(p.bytes) / p.time_us / 1e3;
    // The script rounds to 4 decimals: allow that, and 1 % besides.
    if (std::abs(given - expected) > 0.01 * expected + 1e-4)
      f.fail("algbw_gb_s", significant(given) + " GB/s is not bytes / time_us (" + significant(expected) +
                               " GB/s): time_us must be microseconds and bytes nccl-tests' size");
  }
  return p;
}

std::string nccl_summary_of(const json& doc) {
  std::vector<std::string> parts;
  if (doc.contains("devices") && doc["devices"].is_array() && !doc["devices"].empty()) {
    std::set<std::string> names;
    for (const json& d : doc["devices"])
      if (d.is_string()) names.insert(d.get<std::string>());
    parts.push_back(std::to_string(doc["devices"].size()) + " x " + join({names.begin(), names.end()}, " / "));
  }
  if (doc.contains("versions") && doc["versions"].is_object())
    for (const char* k : {"nccl", "torch", "driver"})
      if (doc["versions"].contains(k) && doc["versions"][k].is_string())
        parts.push_back(std::string(k == std::string("nccl") ? "NCCL" : k) + " " +
                        doc["versions"][k].get<std::string>());
  if (doc.contains("date") && doc["date"].is_string()) parts.push_back(doc["date"].get<std::string>());
  std::string s = join(parts);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';  // it goes into a YAML comment
  return s;
}

}  // namespace

NcclMeasurements nccl_measurements_from_text(const std::string& text, const std::string& file) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw ConfigError(file, 0, "", std::string("not a JSON NCCL measurement (nccl_bandwidth.py's): ") + e.what());
  }
  NcclMeasurements m;
  m.file = file;
  const JsonFields f(doc, file, "");
  if (!doc.is_object()) f.fail("", "expected an object {\"format\": \"dlsim-nccl-bandwidth\", ...}");
  if (f.text("format") != "dlsim-nccl-bandwidth")
    f.fail("format", "must be dlsim-nccl-bandwidth (validate/torch/nccl_bandwidth.py's), got '" + f.text("format") +
                         "'");
  const int64_t version = f.integer("version", 1, 1000000);
  if (version != 1) f.fail("version", "version " + std::to_string(version) + " of the format; this dlsim reads 1");
  f.allow_only(kNcclTopFields);
  m.backend = f.text("backend");
  if (m.backend != "nccl" && m.backend != "gloo") f.fail("backend", "must be nccl or gloo, got '" + m.backend + "'");
  m.device = f.text("device");
  if (m.device != "cuda" && m.device != "cpu") f.fail("device", "must be cuda or cpu, got '" + m.device + "'");
  m.world_size = static_cast<int>(f.integer("world_size", 2, kNcclMaxRanks));
  m.gpus_per_node = static_cast<int>(f.integer("gpus_per_node", 1, 1024));
  m.nodes = static_cast<int>(f.integer("nodes", 1, kNcclMaxRanks));
  if (int64_t{m.nodes} * m.gpus_per_node != m.world_size)
    f.fail("nodes", std::to_string(m.nodes) + " nodes of " + std::to_string(m.gpus_per_node) + " GPUs are not the " +
                        std::to_string(m.world_size) + " ranks of world_size");
  const json& rows = f.at("results");
  if (!rows.is_array()) f.fail("results", "must be an array of measured rows");
  if (rows.empty()) f.fail("results", "is empty: nothing to fit");
  m.points.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) m.points.push_back(nccl_read_row(rows[i], m, i));
  m.summary = nccl_summary_of(doc);
  return m;
}

NcclMeasurements load_nccl_measurements(const std::string& path) {
  return nccl_measurements_from_text(read_input_file(path, "--nccl"), path);
}

}  // namespace dlsim
