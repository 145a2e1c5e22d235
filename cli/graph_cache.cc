#include "cli/graph_cache.h"

#include <exception>

#include "cli/run_experiment.h"

namespace dlsim {

GraphCache::Key GraphCache::key_of(const Experiment& e) {
  return {e.model,
          e.batch,
          e.image_size,
          e.seq_len,
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
  std::promise<std::shared_ptr<const Graph>> build;
  std::shared_future<std::shared_ptr<const Graph>> graph;
  bool builder = false;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto it = graphs_.find(key);
    if (it == graphs_.end()) {
      it = graphs_.emplace(key, build.get_future().share()).first;
      builder = true;
      ++builds_;
    }
    graph = it->second;
  }
  if (builder) {  // outside the lock: other keys build meanwhile; callers of this one wait in get()
    try {
      build.set_value(std::make_shared<const Graph>(build_experiment_graph(e)));
    } catch (...) {
      build.set_exception(std::current_exception());
    }
  }
  return graph.get();
}

size_t GraphCache::builds() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return builds_;
}

}  // namespace dlsim
