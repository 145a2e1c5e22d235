#pragma once
// The hardware file's `interconnect:` section (hw/collective_model.h's Interconnect): NVLink within a node and
// the network between nodes, per GPU and per direction.
//
//   interconnect:
//     base_latency_us: 10        # once per collective
//     intra_node:                # NVLink / NVSwitch
//       link_gb_per_s: 450       # per GPU, per direction
//       latency_us: 2            # one ring or tree step
//       bus_efficiency: 0.8      # nccl-tests' large-message busbw / link_gb_per_s, in (0, 1]
//     inter_node:                # optional: the NIC of each GPU; a machine of one node leaves it out
//       link_gb_per_s: 50
//       latency_us: 5
//       bus_efficiency: 0.8
//     channels: 24               # optional (16): NCCL's channels, the thread blocks (SMs) a collective holds
//   node:
//     gpus_per_node: 8           # GPUs of one NVLink domain
//     max_nodes: 32              # optional: the most nodes a layout may span; absent: unbounded
//
// The hardware loader (hw/gpu_spec_file.cc) reads both into GpuSpec; `interconnect:` needs `node:`.
#include <string>

#include "common/yaml_reader.h"
#include "hw/collective_model.h"

namespace dlsim {

// Reads the section's mapping `m`; every missing, unknown or out-of-range key is a ConfigError naming the file,
// the line and the dotted key (interconnect.intra_node.bus_efficiency).
Interconnect read_interconnect(const YamlMap& m);
// Reads the `node:` mapping: gpus_per_node in [1, 1024], max_nodes (optional) in [1, 1e6].
NodeSpec read_node(const YamlMap& m);

// A document holding `interconnect:` and nothing else (the tests' and the fuzz target's entry; the hardware file
// will call read_interconnect on its own section).
Interconnect interconnect_from_yaml(const YAML::Node& doc, const std::string& file);

}  // namespace dlsim
