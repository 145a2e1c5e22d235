#pragma once
// The plan file: everything dlsim-cuda needs to run one experiment on a real GPU — the training Graph, the
// Program the policies compiled, the pool by name and parameters, the modelled capacity — as one JSON document.
// `dlsim validate` writes it and runs dlsim-cuda on it; so dlsim-cuda needs neither the experiment loader nor the
// policies' planning code, and the same file replays the run on any GPU machine.
#include <nlohmann/json.hpp>

#include <string>

#include "common/params.h"
#include "program/program.h"
#include "workloads/graph.h"

namespace dlsim {

struct ProgramFile {
  std::string experiment;  // the experiment file it came from (for reports)
  std::string hw;          // the modelled GPU (GpuSpec name)
  uint64_t capacity_bytes = 0;  // the pool's device capacity, as the simulator's VirtualDeviceMemory had it
  // The modelled cudaDeviceProp::totalGlobalMem (capacity + the context's reserve). Plans written before it
  // existed lack the field and read it as capacity_bytes, which is what those runs' pools saw.
  uint64_t total_global_mem_bytes = 0;
  std::string pool;
  Params pool_params;
  int warmup = 2;
  int iterations = 5;
  Graph graph;
  Program program;
};

nlohmann::json program_file_to_json(const ProgramFile& p);
// Every missing or malformed field is a ConfigError naming `file` and the field's JSON path.
ProgramFile program_file_from_json(const nlohmann::json& j, const std::string& file);

// Which run a plan describes, as far as comparing and fitting traces cares, as 16 hex digits (64-bit FNV-1a): the
// graph's name and batch, each op's name and kind, and the ops one iteration launches, in order and on which
// stream. Not the hardware, capacity, pool or tensor sizes: a measured run is compared with its simulated twin
// under another hardware file (results/validation/sim_vs_real.py), whose plan differs in those. Both backends
// write it into their traces (Trace::program_hash), and `dlsim compare` and `dlsim calibrate` refuse a trace of
// another plan. It tells mixed-up files apart; it is no defence against a forged one.
std::string program_fingerprint(const ProgramFile& p);

void write_program_file(const ProgramFile& p, const std::string& path);
ProgramFile read_program_file(const std::string& path);
// The same for JSON text already in memory (`file` names it in errors): the fuzz targets' entry point.
ProgramFile program_file_from_text(const std::string& text, const std::string& file);

}  // namespace dlsim
