#pragma once
// `dlsim fit --layouts dp,fsdp,zero1,zero2,fsdp+tp8 --gpus 1,2,4,8`: over candidate layouts and GPU counts,
// whether the experiment's batch (per GPU) fits, the largest batch per GPU that fits, the smallest GPU count at
// which each layout fits and the fastest layout that fits at each count. A count is the job's GPUs: data-parallel
// ranks x tensor-parallel ranks (ParallelLayout::gpus()).
// A simulated out-of-memory is a result (status "oom"); a run that throws (a layout the hardware cannot price, a
// combination the simulator refuses) is a cell with status "error" and its message, so that one bad cell does not
// hide the others.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/batch_search.h"
#include "experiment/experiment.h"
#include "parallel/parallel_layout.h"

namespace dlsim {

// One candidate: "dp" (DDP), "fsdp" (FSDP2 / ZeRO-3), "zero1", "zero2", alone or composed with tensor parallelism
// over T GPUs as "<name>+tp<T>" ("fsdp+tp8": torchtitan's FSDP x TP; the Llama family only). On N GPUs a tp
// candidate has N / T data-parallel ranks; a count that T does not divide is no layout of it (status "skipped").
struct LayoutCandidate {
  std::string name;
  parallel::Layout layout = parallel::Layout::Ddp;
  int zero_stage = 0;
  int64_t tp = 1;
};

// The data-parallel names `--layouts` takes (each may carry "+tp<T>"), in the order they are listed in errors.
const std::vector<std::string>& layout_candidate_names();
// The tensor-parallel degrees the default candidates compose with FSDP: 2, 4 and 8, the tp groups that fit in an
// 8-GPU NVLink node (an H100 or H200 HGX board), as torchtitan and Megatron keep tp within a node.
const std::vector<int64_t>& default_tp_degrees();
// `--layouts` left out: the four data-parallel layouts and, for a model whose builder splits it for tensor
// parallelism (the Llama family, workloads/zoo.h ModelSettings::tensor_parallel), "fsdp+tp<T>" for each default
// degree.
std::vector<std::string> default_layout_names(const std::string& model);
// Parses the listed names; an empty list, an unknown or a repeated name, or a tp degree that is not a whole number
// in [2, 1024] is a ConfigError naming `flag`.
std::vector<LayoutCandidate> parse_layout_candidates(const std::vector<std::string>& names, const std::string& flag);
// Checks GPU counts (1 .. parallel::kMaxRanks, none repeated, at least one) and sorts them ascending; errors name
// `flag`.
std::vector<int64_t> check_gpu_counts(std::vector<int64_t> counts, const std::string& flag);
// 1, 2, 4, ... up to `max` and `max` itself (1 .. kMaxRanks, else a ConfigError naming `flag`).
std::vector<int64_t> gpu_counts_up_to(int64_t max, const std::string& flag);

// Whether `c` is a layout of `gpus` GPUs: T divides the count (T <= the count).
bool layout_fits_count(const LayoutCandidate& c, int64_t gpus);
// The experiment as one rank of `c` on `gpus` GPUs (layout_fits_count, else std::invalid_argument): gpus / T
// data-parallel ranks of T tensor-parallel ranks each, so that ParallelLayout::gpus() is `gpus`. The experiment's
// batch is per GPU: a tp candidate's data-parallel rank runs batch x T, which its T GPUs share, so that every
// candidate on a count trains the same global batch and their iteration times compare. The options of the
// experiment's own `parallel:` section (bucket_cap_mb, FSDP's wrap, dtypes, resharding) are kept; a tp candidate
// keeps its sequence_parallel and tp_across_nodes when the section names tp, and otherwise runs with sequence
// parallel, as torchtitan's TP (and Megatron's with --sequence-parallel) does. A candidate without tp runs none,
// whatever the section says.
Experiment with_layout(const Experiment& e, const LayoutCandidate& c, int64_t gpus);

struct LayoutCell {
  std::string layout;  // the candidate's name
  int64_t gpus = 0;
  std::string status;  // "fits", "oom", "error", or "skipped" (the count is no layout of a tp candidate)
  std::string message; // where it ran out of memory, the error, or why it was skipped
  // at the experiment's batch (status fits or oom)
  double iteration_time_us = 0;
  uint64_t peak_live_bytes = 0, peak_reserved_bytes = 0;
  // the largest batch per GPU that fits (0: none; not searched for an error cell)
  int64_t max_batch = 0;
  double iteration_time_at_max_us = 0;
  bool fits() const { return status == "fits"; }
};

struct LayoutSearch {
  int64_t batch = 0;  // per GPU
  std::vector<std::string> layouts;
  std::vector<int64_t> tp;       // each layout's tensor-parallel degree (1: none)
  std::vector<int64_t> gpus;     // ascending
  std::vector<LayoutCell> cells; // layout by layout (in the listed order), each over `gpus` ascending
  const LayoutCell& cell(size_t layout, size_t count) const { return cells[layout * gpus.size() + count]; }
  // The least count at which layout i fits at the experiment's batch; 0: at none of the counts.
  int64_t smallest_gpus(size_t layout) const;
  // The index of the fastest layout (least iteration time at the experiment's batch) that fits at count j, the
  // first listed on a tie; -1 when none fits.
  int fastest_at(size_t count) const;
  bool any_fits() const;
  bool any_error() const;
};

// Runs every (layout, count) at the experiment's batch and, where `max_batch` is set, searches the largest batch
// per GPU that fits (experiment/batch_search.h, capped at batch_cap).
LayoutSearch search_layouts(const Experiment& e, const std::vector<LayoutCandidate>& layouts,
                            const std::vector<int64_t>& gpus, const RunFn& run, int64_t batch_cap, bool max_batch = true);

nlohmann::json to_json(const LayoutSearch& s);

}  // namespace dlsim
