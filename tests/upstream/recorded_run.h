#pragma once
// The allocation calls one simulated run makes, recorded at the pool while dlsim's own model of an allocator
// serves them: the traces every upstream replay (cnmem_replay_test.cc, tf_bfc_replay_test.cc) feeds through both
// dlsim's model and the real code. `make_pool(device)` builds the model under test on the run's device.
#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <vector>

#include "experiment/experiment.h"
#include "experiment/run_experiment.h"
#include "policies/pool/testing/recording_pool.h"
#include "policies/pool/virtual_device_memory.h"
#include "sim/executor.h"

namespace dlsim::upstream {

struct RecordedRun {
  std::vector<testing::AllocTraceOp> ops;
  uint64_t capacity = 0;  // what the device offered the pool
  uint64_t total = 0;     // cudaDeviceProp::totalGlobalMem
};

template <typename MakePool>
RecordedRun record_run(const std::string& experiment_yaml, MakePool make_pool) {
  const Experiment e = experiment_from_yaml(YAML::Load(experiment_yaml), "<replay>");
  PreparedExperiment prep = prepare_experiment(e);
  VirtualDeviceMemory dev(prep.hw.spec.memory_bytes, prep.hw.spec.total_memory_bytes);
  testing::RecordingPool pool(make_pool(dev));
  SimContext ctx{prep.graph, prep.hw.spec, *prep.hw.kernels, *prep.hw.link, pool, dev};
  SimOptions opt;
  opt.iterations = e.iterations;
  opt.record_trace = false;
  simulate(prep.program, ctx, opt);
  return {pool.ops(), prep.hw.spec.memory_bytes, prep.hw.spec.total_memory_bytes};
}

}  // namespace dlsim::upstream
