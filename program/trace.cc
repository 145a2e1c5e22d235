#include "program/trace.h"

#include <map>
#include <stdexcept>
#include <string>

namespace dlsim {

using nlohmann::json;

json to_json(const Trace& t) {
  json j;
  j["backend"] = t.backend;
  j["device"] = t.device;
  if (!t.program_hash.empty()) j["program_hash"] = t.program_hash;
  j["oom"] = t.oom;
  j["oom_where"] = t.oom_where;
  json its = json::array();
  for (const auto& r : t.iterations) its.push_back({{"start", r.start}, {"end", r.end}});
  j["iterations"] = std::move(its);
  json ops = json::array();
  for (const auto& r : t.ops)
    ops.push_back({{"iteration", r.iteration}, {"op", r.op}, {"stream", r.stream}, {"start", r.start}, {"end", r.end}});
  j["ops"] = std::move(ops);
  json mem = json::array();
  for (const auto& r : t.mem)
    mem.push_back({{"iteration", r.iteration},
                   {"time", r.time},
                   {"action", r.action == MemAction::Alloc ? "alloc" : "free"},
                   {"tensor", r.tensor},
                   {"address", r.address},
                   {"bytes", r.bytes},
                   {"reserved_after", r.reserved_after}});
  j["mem"] = std::move(mem);
  json copies = json::array();
  for (const auto& r : t.copies) {
    copies.push_back({{"iteration", r.iteration},
                      {"tensor", r.tensor},
                      {"to_host", r.to_host},
                      {"bytes", r.bytes},
                      {"start", r.start},
                      {"end", r.end}});
    if (r.stream >= 0) copies.back()["stream"] = r.stream;
  }
  j["copies"] = std::move(copies);
  return j;
}

namespace {

// Reads field `key` of object `j` (whose path in the document is `where`) as T; a missing field or a value of
// the wrong type is an error naming the field's full path, e.g. "ops[3].start".
template <class T>
T field(const json& j, const std::string& where, const std::string& key) {
  const std::string path = where.empty() ? key : where + "." + key;
  if (!j.is_object()) throw std::runtime_error("trace JSON: '" + (where.empty() ? "<root>" : where) + "' is not an object");
  auto it = j.find(key);
  if (it == j.end()) throw std::runtime_error("trace JSON: missing field '" + path + "'");
  const json& v = *it;
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) throw std::runtime_error("trace JSON: field '" + path + "' must be a boolean");
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) throw std::runtime_error("trace JSON: field '" + path + "' must be a string");
  } else if constexpr (std::is_unsigned_v<T>) {
    if (!v.is_number_unsigned()) throw std::runtime_error("trace JSON: field '" + path + "' must be a non-negative integer");
  } else {
    if (!v.is_number_integer()) throw std::runtime_error("trace JSON: field '" + path + "' must be an integer");
  }
  return v.get<T>();
}

const json& array_field(const json& j, const std::string& key) {
  auto it = j.find(key);
  if (it == j.end()) throw std::runtime_error("trace JSON: missing field '" + key + "'");
  if (!it->is_array()) throw std::runtime_error("trace JSON: field '" + key + "' must be an array");
  return *it;
}

std::string at(const std::string& key, size_t i) { return key + "[" + std::to_string(i) + "]"; }

}  // namespace

Trace trace_from_json(const json& j) {
  Trace t;
  if (!j.is_object()) throw std::runtime_error("trace JSON: the document is not an object");
  t.backend = field<std::string>(j, "", "backend");
  t.device = field<std::string>(j, "", "device");
  if (j.contains("program_hash")) t.program_hash = field<std::string>(j, "", "program_hash");  // optional: older traces
  t.oom = field<bool>(j, "", "oom");
  t.oom_where = field<std::string>(j, "", "oom_where");
  const json& its = array_field(j, "iterations");
  for (size_t i = 0; i < its.size(); ++i) {
    const std::string w = at("iterations", i);
    t.iterations.push_back({field<TimeNs>(its[i], w, "start"), field<TimeNs>(its[i], w, "end")});
  }
  const json& ops = array_field(j, "ops");
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string w = at("ops", i);
    const json& o = ops[i];
    t.ops.push_back({field<int>(o, w, "iteration"), field<OpId>(o, w, "op"), field<int>(o, w, "stream"),
                     field<TimeNs>(o, w, "start"), field<TimeNs>(o, w, "end")});
  }
  const json& mem = array_field(j, "mem");
  for (size_t i = 0; i < mem.size(); ++i) {
    const std::string w = at("mem", i);
    const json& m = mem[i];
    MemRecord r;
    r.iteration = field<int>(m, w, "iteration");
    r.time = field<TimeNs>(m, w, "time");
    const std::string action = field<std::string>(m, w, "action");
    if (action != "alloc" && action != "free")
      throw std::runtime_error("trace JSON: field '" + w + ".action' must be \"alloc\" or \"free\", got \"" + action + "\"");
    r.action = action == "alloc" ? MemAction::Alloc : MemAction::Free;
    r.tensor = field<TensorId>(m, w, "tensor");
    r.address = field<uint64_t>(m, w, "address");
    r.bytes = field<uint64_t>(m, w, "bytes");
    r.reserved_after = field<uint64_t>(m, w, "reserved_after");
    t.mem.push_back(r);
  }
  const json& copies = array_field(j, "copies");
  for (size_t i = 0; i < copies.size(); ++i) {
    const std::string w = at("copies", i);
    const json& c = copies[i];
    t.copies.push_back({field<int>(c, w, "iteration"), field<TensorId>(c, w, "tensor"), field<bool>(c, w, "to_host"),
                        field<uint64_t>(c, w, "bytes"), field<TimeNs>(c, w, "start"), field<TimeNs>(c, w, "end")});
    // Optional: traces written before copies named their stream have none (-1: matched on tensor and direction).
    if (c.contains("stream")) t.copies.back().stream = field<int>(c, w, "stream");
  }
  return t;
}

// One process; a track (tid) per stream for kernels, two more for the copy directions, and a counter of the
// bytes the pool holds and one of the SM occupancy (the share of the block slots resident kernels hold). Times in the format are microseconds.
json to_chrome_trace(const Trace& t, const Graph& g) {
  constexpr int kD2HTrack = 1000, kH2DTrack = 1001;
  auto us = [](TimeNs ns) { return static_cast<double>(ns) / 1000.0; };
  json ev = json::array();
  std::map<int, bool> streams;  // ordered: deterministic metadata
  for (const auto& r : t.ops) streams[r.stream] = true;
  ev.push_back({{"ph", "M"}, {"pid", 0}, {"name", "process_name"}, {"args", {{"name", t.backend + " " + t.device}}}});
  for (const auto& [s, unused] : streams)
    ev.push_back({{"ph", "M"}, {"pid", 0}, {"tid", s}, {"name", "thread_name"}, {"args", {{"name", "stream " + std::to_string(s)}}}});
  if (!t.copies.empty()) {
    ev.push_back({{"ph", "M"}, {"pid", 0}, {"tid", kD2HTrack}, {"name", "thread_name"}, {"args", {{"name", "copy D2H"}}}});
    ev.push_back({{"ph", "M"}, {"pid", 0}, {"tid", kH2DTrack}, {"name", "thread_name"}, {"args", {{"name", "copy H2D"}}}});
  }
  constexpr int kHostTrack = -2;  // the host issuing each launch (the simulator's traces only)
  if (!t.host_ops.empty())
    ev.push_back({{"ph", "M"}, {"pid", 0}, {"tid", kHostTrack}, {"name", "thread_name"},
                  {"args", {{"name", "host (issuing ops)"}}}});
  for (const auto& r : t.host_ops) {
    const bool known = r.op >= 0 && static_cast<size_t>(r.op) < g.ops().size();
    ev.push_back({{"ph", "X"}, {"pid", 0}, {"tid", kHostTrack},
                  {"name", known ? g.op(r.op).name : "op " + std::to_string(r.op)}, {"cat", "host"},
                  {"ts", us(r.start)}, {"dur", us(r.end - r.start)},
                  {"args", {{"iteration", r.iteration}, {"op", r.op}, {"stream", r.stream}}}});
  }
  for (const auto& r : t.ops) {
    const bool known = r.op >= 0 && static_cast<size_t>(r.op) < g.ops().size();
    const std::string name = known ? g.op(r.op).name : "op " + std::to_string(r.op);
    const std::string kind = known ? to_string(g.op(r.op).kind) : "?";
    ev.push_back({{"ph", "X"}, {"pid", 0}, {"tid", r.stream}, {"name", name}, {"cat", kind},
                  {"ts", us(r.start)}, {"dur", us(r.end - r.start)}, {"args", {{"iteration", r.iteration}, {"op", r.op}}}});
  }
  for (const auto& r : t.copies) {
    const bool known = r.tensor >= 0 && static_cast<size_t>(r.tensor) < g.tensors().size();
    const std::string name = (r.to_host ? "out " : "in ") + (known ? g.tensor(r.tensor).name : std::to_string(r.tensor));
    ev.push_back({{"ph", "X"}, {"pid", 0}, {"tid", r.to_host ? kD2HTrack : kH2DTrack}, {"name", name}, {"cat", "copy"},
                  {"ts", us(r.start)}, {"dur", us(r.end - r.start)},
                  {"args", {{"iteration", r.iteration}, {"bytes", r.bytes}}}});
  }
  for (const auto& r : t.mem)
    ev.push_back({{"ph", "C"}, {"pid", 0}, {"name", "reserved bytes"}, {"ts", us(r.time)},
                  {"args", {{"reserved", r.reserved_after}}}});
  for (const auto& c : t.sm_occupancy)
    ev.push_back({{"ph", "C"}, {"pid", 0}, {"name", "SM occupancy"}, {"ts", us(c.time)},
                  {"args", {{"occupancy", c.value}}}});
  for (size_t i = 0; i < t.iterations.size(); ++i) {
    const auto& r = t.iterations[i];
    ev.push_back({{"ph", "X"}, {"pid", 0}, {"tid", -1}, {"name", "iteration " + std::to_string(i)}, {"cat", "iteration"},
                  {"ts", us(r.start)}, {"dur", us(r.end - r.start)}});
  }
  return {{"traceEvents", std::move(ev)}, {"displayTimeUnit", "ns"}};
}

}  // namespace dlsim
