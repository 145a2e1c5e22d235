#include "validate/gpu/microbench_records.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "common/config_error.h"
#include "common/input_file.h"

namespace dlsim {

using nlohmann::json;

namespace {

template <class T>
T need(const json& j, const char* key, const std::string& file, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw ConfigError(file, 0, where + "." + key, "missing field");
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    throw ConfigError(file, 0, where + "." + key, std::string("wrong type: ") + e.what());
  }
}

const json& array_of(const json& j, const char* key, const std::string& file) {
  if (!j.contains(key) || !j.at(key).is_array()) throw ConfigError(file, 0, key, "missing or not an array");
  return j.at(key);
}

}  // namespace

json to_json(const MicrobenchResults& r) {
  json copies = json::array(), allocs = json::array(), conc = json::array();
  for (const auto& c : r.copies)
    copies.push_back({{"dir", c.dir == CopyDir::HostToDevice ? "h2d" : "d2h"}, {"pinned", c.pinned},
                      {"bidirectional", c.bidirectional}, {"bytes", c.bytes}, {"ns", c.ns}});
  for (const auto& a : r.allocs) allocs.push_back({{"call", a.is_free ? "cudaFree" : "cudaMalloc"}, {"bytes", a.bytes}, {"ns", a.ns}});
  for (const auto& c : r.concurrency)
    conc.push_back({{"convs", c.convs}, {"shape", c.shape}, {"serial_ns", c.serial_ns}, {"parallel_ns", c.parallel_ns},
                    {"eager_serial_ns", c.eager_serial_ns}, {"eager_parallel_ns", c.eager_parallel_ns},
                    {"single_ns", c.single_ns}});
  return {{"format", "dlsim-microbench-1"}, {"device", r.device}, {"copies", copies}, {"allocs", allocs},
          {"launch_overhead_ns", r.launch_overhead_ns}, {"concurrency", conc}};
}

MicrobenchResults microbench_from_json(const json& j, const std::string& file) {
  if (need<std::string>(j, "format", file, "microbench") != "dlsim-microbench-1")
    throw ConfigError(file, 0, "format", "expected 'dlsim-microbench-1'");
  MicrobenchResults r;
  r.device = need<std::string>(j, "device", file, "microbench");
  r.launch_overhead_ns = need<double>(j, "launch_overhead_ns", file, "microbench");
  if (!(r.launch_overhead_ns > 0) || !std::isfinite(r.launch_overhead_ns))
    throw ConfigError(file, 0, "launch_overhead_ns", "must be a positive number of ns");
  const json& copies = array_of(j, "copies", file);
  for (size_t i = 0; i < copies.size(); ++i) {
    const std::string w = "copies[" + std::to_string(i) + "]";
    CopySample c;
    const std::string dir = need<std::string>(copies[i], "dir", file, w);
    if (dir != "h2d" && dir != "d2h") throw ConfigError(file, 0, w + ".dir", "expected 'h2d' or 'd2h', got '" + dir + "'");
    c.dir = dir == "h2d" ? CopyDir::HostToDevice : CopyDir::DeviceToHost;
    c.pinned = need<bool>(copies[i], "pinned", file, w);
    c.bidirectional = need<bool>(copies[i], "bidirectional", file, w);
    c.bytes = need<uint64_t>(copies[i], "bytes", file, w);
    c.ns = need<double>(copies[i], "ns", file, w);
    if (c.bytes == 0 || !(c.ns > 0) || !std::isfinite(c.ns)) throw ConfigError(file, 0, w, "bytes and ns must be positive");
    r.copies.push_back(c);
  }
  const json& allocs = array_of(j, "allocs", file);
  for (size_t i = 0; i < allocs.size(); ++i) {
    const std::string w = "allocs[" + std::to_string(i) + "]";
    AllocSample a;
    const std::string call = need<std::string>(allocs[i], "call", file, w);
    if (call != "cudaMalloc" && call != "cudaFree") throw ConfigError(file, 0, w + ".call", "expected cudaMalloc or cudaFree");
    a.is_free = call == "cudaFree";
    a.bytes = need<uint64_t>(allocs[i], "bytes", file, w);
    a.ns = need<double>(allocs[i], "ns", file, w);
    // A timed call takes some time: 0, a negative or a NaN time would fit a cost line the hardware file refuses.
    if (!(a.ns > 0) || !std::isfinite(a.ns)) throw ConfigError(file, 0, w + ".ns", "must be a positive number of ns");
    r.allocs.push_back(a);
  }
  const json& conc = array_of(j, "concurrency", file);
  for (size_t i = 0; i < conc.size(); ++i) {
    const std::string w = "concurrency[" + std::to_string(i) + "]";
    ConcurrencySample c;
    c.convs = need<int>(conc[i], "convs", file, w);
    c.shape = need<std::string>(conc[i], "shape", file, w);
    c.serial_ns = need<double>(conc[i], "serial_ns", file, w);
    c.parallel_ns = need<double>(conc[i], "parallel_ns", file, w);
    if (!(c.serial_ns > 0) || !std::isfinite(c.serial_ns))
      throw ConfigError(file, 0, w + ".serial_ns", "must be a positive number of ns");
    if (!(c.parallel_ns > 0) || !std::isfinite(c.parallel_ns))
      throw ConfigError(file, 0, w + ".parallel_ns", "must be a positive number of ns");
    // Optional: records written before they existed have none.
    c.eager_serial_ns = conc[i].value("eager_serial_ns", 0.0);
    c.eager_parallel_ns = conc[i].value("eager_parallel_ns", 0.0);
    c.single_ns = conc[i].value("single_ns", 0.0);
    r.concurrency.push_back(c);
  }
  return r;
}

MicrobenchResults read_microbench_file(const std::string& path) {
  const std::string text = read_input_file(path);
  try {
    return microbench_from_json(json::parse(text), path);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number that overflows (1e999)
    throw ConfigError(path, 0, "", std::string("not valid JSON: ") + e.what());
  }
}

std::string copies_csv(const MicrobenchResults& r) {
  std::ostringstream o;
  o << "dir,pinned,bidirectional,bytes,ns\n";
  for (const auto& c : r.copies)
    o << (c.dir == CopyDir::HostToDevice ? "h2d" : "d2h") << ',' << c.pinned << ',' << c.bidirectional << ','
      << c.bytes << ',' << c.ns << '\n';
  return o.str();
}

}  // namespace dlsim
