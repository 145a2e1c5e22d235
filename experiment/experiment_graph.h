#pragma once
// The experiment's training graph: built from its model and options (build_experiment_graph), or, in a sweep,
// taken from a GraphCache.
// The training graphs of a sweep, each built once per (model, batch, model options) and shared by every point
// and thread that needs it. A sweep over pools, swap and concurrency policies or hardware runs the same graph
// many times; building it (and, for an ONNX model, reading the file) was a large part of a small point's time.
#include <condition_variable>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "experiment/experiment.h"
#include "workloads/graph.h"

namespace dlsim {

// The experiment's training graph, as prepare_experiment(e) builds it: a builder's error that names another file
// (the zoo, an ONNX file) is given the experiment's file and key `model`.
Graph build_experiment_graph(const Experiment& e);

class GraphCache {
 public:
  // The experiment's training graph (as build_experiment_graph builds it). The first
  // caller of a key builds it; callers of the same key meanwhile wait for that build, callers of other keys
  // build theirs in parallel. A build that throws is remembered and rethrown to every caller of its key (the
  // builders are deterministic: trying again would fail the same way).
  std::shared_ptr<const Graph> get(const Experiment& e);
  size_t builds() const;  // how many graphs were built (for tests)

 private:
  // Everything build_experiment_graph reads: model, batch, image_size, seq_len, attention, the training options and
  // max_graph_nodes (file: an ONNX model's error names the experiment file).
  using Key = std::tuple<std::string, int64_t, int64_t, int64_t, int, int, int, int, int, int, int64_t, int64_t, int,
                         double, std::string>;
  static Key key_of(const Experiment& e);
  struct Entry {
    bool ready = false;
    std::shared_ptr<const Graph> graph;
    std::exception_ptr error;
  };
  // One lock and condition for all entries (plain mutex and condition variable rather than std::future: thread
  // checkers such as Helgrind follow them, and a build is rare next to the runs that use it).
  mutable std::mutex mutex_;
  std::condition_variable built_;
  std::map<Key, Entry> graphs_;  // std::map: an entry stays where it is while others are added
  size_t builds_ = 0;
};

}  // namespace dlsim
