#pragma once
// The op signature with the batch taken out, so that a kernel time or a cuDNN workspace measured at one batch
// can stand in for the same op at another. On a real H100 (results/validation/h100-sxm/), cuDNN picked the same
// algorithm for all 521 convolutions of four CNNs at batch 32 and 64, and most workspaces and times grew with
// the batch in proportion: so a measurement at batch b, scaled by N / b, is the calibrated model's guess for an
// unmeasured batch N (before it falls back to the roofline).
#include <cstdint>
#include <optional>
#include <string>

#include "workloads/graph.h"

namespace dlsim {

struct BatchFreeSignature {
  std::string key;     // op_signature with every batch dimension written "B" (or "B*k" for k whole batches)
  int64_t batch = 0;   // the graph's batch the op was built for
};

// Attributes: `macs` is left out (it follows from the shapes), `rows` and `batch` are written like a leading
// dimension; the others are kept as they are.
// An activation, gradient or input whose leading dimension is a whole number of batches carries the batch;
// weights and optimizer state never do (a 64-channel filter at batch 64 keeps its 64). nullopt when no tensor
// of the op carries the batch (e.g. an optimizer update) or the graph has no batch: such an op's signature does
// not change with the batch, and an exact lookup serves it.
std::optional<BatchFreeSignature> batch_free_signature(const Graph& g, const Op& op);

}  // namespace dlsim
