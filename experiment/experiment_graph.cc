#include "experiment/experiment_graph.h"

#include <exception>

#include "common/config_error.h"
#include "experiment/parallel_precision.h"
#include "workloads/zoo.h"

namespace dlsim {

namespace {

ModelOptions model_options(const Experiment& e) {
  ModelOptions mo;
  mo.batch = e.batch;
  mo.image_size = e.image_size;
  mo.seq_len = e.seq_len;
  mo.attention = e.attention;
  mo.training = training_options(e);
  mo.max_graph_nodes = e.max_graph_nodes;
  // Tensor parallelism is written in the parallel: section only (one source of truth: the model section has no
  // tp key); the builder makes the graph one rank's of the tp group.
  mo.tp = e.parallel.tp;
  mo.sequence_parallel = e.parallel.sequence_parallel;
  mo.tp_across_nodes = e.parallel.tp_across_nodes;
  return mo;
}

// Whether a builder's error is about the tensor-parallel options: their own keys, or a size that tp does not
// divide (workloads/tensor_parallel.cc: "... not divisible by the tensor-parallel degree", "sequence parallelism
// splits ..."). Those are fixed in the parallel: section, so they are reported there.
bool tensor_parallel_error(const ConfigError& err, const Experiment& e) {
  if (e.parallel.tp == 1 && !e.parallel.sequence_parallel && !e.parallel.tp_across_nodes) return false;
  const std::string& k = err.key();
  const std::string& m = err.message();
  return k == "tp" || k == "sequence_parallel" || k == "tp_across_nodes" ||
         m.find("tensor-parallel") != std::string::npos || m.find("tensor parallelism") != std::string::npos ||
         m.find("sequence parallelism") != std::string::npos;
}

}  // namespace

Graph build_experiment_graph(const Experiment& e) {
  try {
    return build_training_graph(e.model, model_options(e));
  } catch (const ConfigError& err) {
    // The builder names the model and the layer; the experiment file is what the user edits.
    if (tensor_parallel_error(err, e)) {
      const std::string key = err.key() == "sequence_parallel" || err.key() == "tp_across_nodes" ? err.key() : "tp";
      throw ConfigError(e.file, e.parallel.line, "parallel." + key,
                        err.message() + " (model " + e.model + ")");
    }
    if (e.file.empty() || err.file() == e.file) throw;
    throw ConfigError(e.file, 0, "model", err.what());
  }
}

GraphCache::Key GraphCache::key_of(const Experiment& e) {
  return {e.model,
          e.batch,
          e.image_size,
          e.seq_len,
          e.attention ? static_cast<int>(*e.attention) : -1,
          static_cast<int>(e.optimizer),
          static_cast<int>(compute_precision(e.precision, e.parallel)),  // what the graph is built in
          static_cast<int>(e.tf32),
          static_cast<int>(e.memory_format),
          static_cast<int>(e.kernels),
          e.max_graph_nodes,
          e.parallel.tp,
          static_cast<int>(e.parallel.sequence_parallel) + 2 * static_cast<int>(e.parallel.tp_across_nodes),
          e.weight_decay,
          e.file};
}

std::shared_ptr<const Graph> GraphCache::get(const Experiment& e) {
  const Key key = key_of(e);
  std::unique_lock<std::mutex> lock(mutex_);
  auto [it, first] = graphs_.try_emplace(key);
  Entry& entry = it->second;
  if (first) {
    ++builds_;
    lock.unlock();  // other keys build meanwhile; callers of this one wait below
    std::shared_ptr<const Graph> graph;
    std::exception_ptr error;
    try {
      graph = std::make_shared<const Graph>(build_experiment_graph(e));
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    entry.graph = std::move(graph);
    entry.error = error;
    entry.ready = true;
    built_.notify_all();
  } else {
    built_.wait(lock, [&entry] { return entry.ready; });
  }
  if (entry.error) std::rethrow_exception(entry.error);
  return entry.graph;
}

size_t GraphCache::builds() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return builds_;
}

}  // namespace dlsim
