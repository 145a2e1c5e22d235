#pragma once
// Which of dlsim's op kinds a recorded aten op is (workloads/torch_step_kinds.cc), with the attributes and FLOPs
// the kernel model prices it by. An aten op dlsim has no kind for is none of them: the graph builder loads it as an
// Other op costed by its memory traffic and reports it.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "workloads/graph.h"
#include "workloads/torch_step.h"

namespace dlsim::workloads_internal {

// One op of dlsim's graph made from a recorded op: its kind, attributes and FLOPs, and which of the recorded op's
// input and output views it reads and writes (empty: all of them). One recorded op may make two (convolution_backward
// computes the data and the filter gradients, two kernels in cuDNN and two ops in dlsim).
struct TorchStepPiece {
  OpKind kind = OpKind::Other;
  OtherOp other = OtherOp::None;  // an Other op's sub-kind (a foreach pass)
  std::vector<std::pair<Attr, int64_t>> attrs;
  double flops = 0;
  std::string suffix;          // appended to the op's name when one recorded op makes several
  std::vector<size_t> inputs;  // indices into TorchStepOp::inputs
  std::vector<size_t> outputs;  // indices into TorchStepOp::outputs
  bool all_views = true;        // inputs/outputs unused: the piece reads and writes every view
};

// The pieces of `op`; empty when dlsim has no kind for it. `phase` is the op's (a zero_ in the optimizer phase is
// zero_grad's).
std::vector<TorchStepPiece> torch_step_pieces(const TorchStepOp& op, Phase phase);

// Ops that allocate and launch nothing (empty, empty_strided, ...): their storage is allocated by the first kernel
// that writes it.
bool torch_step_allocates_only(const std::string& aten_name);

}  // namespace dlsim::workloads_internal
