#include "experiment/graph_cache.h"

#include <exception>

#include "experiment/run_experiment.h"

namespace dlsim {

GraphCache::Key GraphCache::key_of(const Experiment& e) {
  return {e.model,
          e.batch,
          e.image_size,
          e.seq_len,
          e.attention ? static_cast<int>(*e.attention) : -1,
          static_cast<int>(e.optimizer),
          static_cast<int>(e.precision),
          static_cast<int>(e.tf32),
          static_cast<int>(e.memory_format),
          static_cast<int>(e.kernels),
          e.max_graph_nodes,
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
