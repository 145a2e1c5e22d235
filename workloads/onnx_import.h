#pragma once
// ONNX import: a file PyTorch's exporter wrote -> a forward Graph built through ModelBuilder, so that the
// same backward and optimizer synthesis applies. Errors (unsupported op, missing shape, corrupt file) are
// ConfigErrors naming the file and the node.
#include <string>

#include "workloads/graph.h"
#include "workloads/model_options.h"

namespace dlsim {

// True when dlsim was built with libonnx-dev (DLSIM_WITH_ONNX).
bool onnx_import_available();
// The batch dimension is overridden with opts.batch (the experiment's batch size).
Graph import_onnx_forward(const std::string& path, const ModelOptions& opts);
// The same for a serialized ModelProto already in memory (`name` names it in errors). A graph of more than
// `max_nodes` nodes (when > 0) is a ConfigError: the fuzz target's bound on the work one input can cause.
Graph import_onnx_forward_from_bytes(const std::string& bytes, const std::string& name, const ModelOptions& opts,
                                     int max_nodes = 0);

}  // namespace dlsim
