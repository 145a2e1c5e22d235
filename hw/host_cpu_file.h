#pragma once
// The hardware file's optional `host_cpu:` section: the host CPU's rates and costs. `adam_gb_per_s` (a CPU Adam's
// rate, for ZeRO-Offload's host step) and `pytorch_eager:` (PyTorch eager mode's per-op host costs,
// hw/eager_host_model.h). Apart from gpu_spec_file.cc because it describes the CPU, not the GPU.
#include "common/yaml_reader.h"
#include "hw/gpu_spec.h"

namespace dlsim {

// Reads `host_cpu` (the mapping `m`) into g.host_adam_bytes_per_s and g.eager_host; every missing, unknown or
// out-of-range key is a ConfigError naming the file, the line and the dotted key
// (host_cpu.pytorch_eager.forward_us.conv).
void read_host_cpu(const YamlMap& m, GpuSpec& g);

}  // namespace dlsim
