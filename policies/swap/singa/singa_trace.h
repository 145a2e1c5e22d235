#pragma once
// One iteration as SINGA's SwapGPU records it (notes singa-memory-management.md sections 2.1, 4.1): every
// Malloc, Read (Block::data), Write (Block::mutable_data) and Free of a device block, in program order, each
// with a global index, its block's size and a timestamp, and the running load (live bytes) after it.
//
// Built here from the issue order and the profiled op times. For the op at each position: a Malloc of each
// tensor first used there (inputs, then outputs, then the workspace), a Read of each input, a Write of each
// output, then a Free of the workspace and of each tensor last used there. Malloc/Read/Write carry the op's
// start time, Free its end time; times are made non-decreasing (SINGA's host clock is), which only matters
// when several streams run ops side by side. SINGA stamps records when the host calls data(), before the
// kernel runs; with a host that issues far ahead, the device's times are the ones that say when data is
// ready, so the profile's device times stand in for SINGA's host clock. Persistent tensors (weights,
// optimizer state) are Blocks too: they are Read and Written, never Malloc'ed or Freed in the iteration.
#include <cstdint>
#include <vector>

#include "policies/swap/core/swap_policy.h"
#include "workloads/graph.h"

namespace dlsim {

enum class BlockOp : uint8_t { Malloc, Read, Write, Free };

struct BlockRecord {
  BlockOp op = BlockOp::Malloc;
  TensorId tensor = kNoTensor;
  uint64_t bytes = 0; // the block's size
  int pos = 0;        // position of the op it belongs to
  TimeNs time = 0;
  uint64_t load = 0;  // live bytes after this record
};

class SingaTrace {
 public:
  SingaTrace(const Graph& g, const IterationProfile& profile);

  const std::vector<BlockRecord>& records() const { return r_; }
  int size() const { return static_cast<int>(r_.size()); }
  const BlockRecord& at(int idx) const { return r_[static_cast<size_t>(idx)]; }
  // SINGA's max_idx: the first index of the largest load.
  int peak_index() const { return peak_; }
  // The position after which the host issues a command that SINGA issues "at" index idx: a Malloc, Read or
  // Write happens before its op's kernel, so after the previous op; a Free after its own op.
  int after_pos(int idx) const;
  // First index whose time is >= t (size() when none); last index whose time is <= t (-1 when none).
  int first_at_or_after(TimeNs t) const;
  int last_at_or_before(TimeNs t) const;

 private:
  std::vector<BlockRecord> r_;
  int peak_ = 0;
};

}  // namespace dlsim
