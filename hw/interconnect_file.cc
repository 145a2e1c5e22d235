#include "hw/interconnect_file.h"

#include "common/strings.h"

namespace dlsim {

namespace {

// A latency in µs, as seconds. At most 1e6 µs (a second): NVLink hops are a few µs and network hops tens, so a
// larger one is a typo.
double latency_s(const YamlMap& m, const std::string& key) {
  const double v = m.get_double(key);
  if (!(v >= 0 && v <= 1e6)) m.fail(key, "must be in [0, 1e6] us, got " + significant(v));
  return v * 1e-6;
}

LinkLevel read_level(const YamlMap& m) {
  m.check_keys({"link_gb_per_s", "latency_us", "bus_efficiency"});
  LinkLevel l;
  const double rate = m.get_double("link_gb_per_s");
  // 1 MB/s .. 100 TB/s per GPU: NVLink 5 is 900 GB/s a direction, so anything outside is a typo (or Gb/s for GB/s).
  if (!(rate >= 1e-3 && rate <= 1e5)) m.fail("link_gb_per_s", "must be in [0.001, 1e5] GB/s, got " + significant(rate));
  l.bytes_per_s = rate * 1e9;
  l.latency_s = latency_s(m, "latency_us");
  const double eff = m.get_double("bus_efficiency");
  // The achieved fraction of the link: above 1 would mean beating the wire, 0 would never finish.
  if (!(eff > 0 && eff <= 1)) m.fail("bus_efficiency", "must be in (0, 1], got " + significant(eff));
  l.bus_efficiency = eff;
  return l;
}

}  // namespace

Interconnect read_interconnect(const YamlMap& m) {
  m.check_keys({"base_latency_us", "intra_node", "inter_node", "channels"});
  Interconnect net;
  net.base_latency_s = latency_s(m, "base_latency_us");
  net.intra = read_level(m.get_map("intra_node"));
  if (m.has("inter_node")) net.inter = read_level(m.get_map("inter_node"));
  if (m.has("channels")) {
    // NCCL's MAXCHANNELS is 32 (64 from 2.19 for some paths): more than 64 is a typo.
    const int64_t c = m.get_int("channels");
    if (c < 1 || c > 64) m.fail("channels", "must be in [1, 64], got " + std::to_string(c));
    net.channels = static_cast<int>(c);
  }
  return net;
}

NodeSpec read_node(const YamlMap& m) {
  m.check_keys({"gpus_per_node", "max_nodes"});
  NodeSpec n;
  const int64_t g = m.get_int("gpus_per_node");
  // An NVL72 rack is 72 GPUs in one NVLink domain; 1024 leaves room and still catches a GPU count for a node count.
  if (g < 1 || g > 1024) m.fail("gpus_per_node", "must be in [1, 1024], got " + std::to_string(g));
  n.gpus_per_node = static_cast<int>(g);
  if (m.has("max_nodes")) {
    const int64_t k = m.get_int("max_nodes");
    if (k < 1 || k > 1000000) m.fail("max_nodes", "must be in [1, 1000000], got " + std::to_string(k));
    n.max_nodes = static_cast<int>(k);
  }
  return n;
}

Interconnect interconnect_from_yaml(const YAML::Node& doc, const std::string& file) {
  const YamlMap root(doc, file);
  root.check_keys({"interconnect"});
  return read_interconnect(root.get_map("interconnect"));
}

}  // namespace dlsim
