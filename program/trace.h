#pragma once
// What a backend observed while executing a Program: one schema for the simulator and the real GPU, so that
// the two can be compared record by record. Times are ns from the start of the run.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/graph.h"

namespace dlsim {

using TimeNs = int64_t;

struct OpRecord {
  int iteration = 0;
  OpId op = -1;
  int stream = 0;
  TimeNs start = 0;
  TimeNs end = 0;
};

enum class MemAction : uint8_t { Alloc, Free };

struct MemRecord {
  int iteration = 0;  // -1: setup, iterations: teardown
  TimeNs time = 0;
  MemAction action = MemAction::Alloc;
  TensorId tensor = kNoTensor;
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t reserved_after = 0;  // device bytes the pool holds after this call
};

struct CopyRecord {
  int iteration = 0;
  TensorId tensor = kNoTensor;
  bool to_host = true;
  uint64_t bytes = 0;
  TimeNs start = 0;
  TimeNs end = 0;
  int stream = -1;  // the stream it ran on; -1 in a trace written before copies named theirs
};

// A value that holds from `time` until the next sample (the simulator's SM occupancy).
struct CounterSample {
  TimeNs time = 0;
  double value = 0;
};

struct IterationRecord {
  TimeNs start = 0;
  TimeNs end = 0;
};

struct Trace {
  std::string backend;  // "sim" or "cuda"
  std::string device;   // GpuSpec name or the real device's name
  // The plan it ran (validate/gpu/program_file.h's program_fingerprint), so that a trace is never compared with
  // or fitted to another plan; empty in a trace written before traces recorded it, or of a run with no plan file.
  std::string program_hash;
  std::vector<IterationRecord> iterations;
  std::vector<OpRecord> ops;
  std::vector<MemRecord> mem;
  std::vector<CopyRecord> copies;
  // The share of the GPU's thread-block slots the resident kernels hold, each time it changes (the simulator
  // only; not part of the JSON schema the two backends share: the chrome trace draws it as a counter track).
  std::vector<CounterSample> sm_occupancy;
  // When the host issued each kernel launch: from the start of the call to the moment the kernel joins its stream
  // (the simulator only, like sm_occupancy; the chrome trace draws them on a "host" track, stream = the launch's).
  std::vector<OpRecord> host_ops;
  bool oom = false;
  std::string oom_where;  // e.g. "iteration 1, alloc of tensor 'layer3.0.conv1.out' (25690112 bytes)"
};

nlohmann::json to_json(const Trace& t);
Trace trace_from_json(const nlohmann::json& j);  // throws std::runtime_error naming the bad field
// Chrome trace-event format (chrome://tracing, Perfetto): one track per stream.
nlohmann::json to_chrome_trace(const Trace& t, const Graph& g);

}  // namespace dlsim
