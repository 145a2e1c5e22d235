#include "policies/swap/checkpoint/checkpoint_swap.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <utility>

#include "common/config_error.h"
#include "policies/swap/checkpoint/selective_checkpoint.h"
#include "policies/swap/core/program_load.h"
#include "workloads/zoo.h"

namespace dlsim {

namespace {

using BlockRange = std::pair<int64_t, int64_t>;  // first and last block, inclusive

// "0-3,4-7,9" -> {{0,3},{4,7},{9,9}}; nullopt when malformed, descending or overlapping.
std::optional<std::vector<BlockRange>> parse_ranges(const std::string& s) {
  std::vector<BlockRange> out;
  size_t i = 0;
  auto number = [&](int64_t& v) {
    const size_t start = i;
    v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (i - start >= 9) return false;  // far more blocks than any model has
      v = v * 10 + (s[i++] - '0');
    }
    return i > start;
  };
  while (i < s.size()) {
    int64_t lo = 0, hi = 0;
    if (!number(lo)) return std::nullopt;
    hi = lo;
    if (i < s.size() && s[i] == '-') {
      ++i;
      if (!number(hi) || hi < lo) return std::nullopt;
    }
    if (!out.empty() && lo <= out.back().second) return std::nullopt;
    out.push_back({lo, hi});
    if (i < s.size()) {
      if (s[i] != ',' || i + 1 == s.size()) return std::nullopt;
      ++i;
    }
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::string block_list(const Graph& g) {
  std::string s = std::to_string(g.blocks.size()) + " blocks";
  if (!g.blocks.empty()) s += " (0 = " + g.blocks.front() + " .. " + std::to_string(g.blocks.size() - 1) + " = " + g.blocks.back() + ")";
  return s;
}

// The forward ops of blocks lo..hi, in forward order.
CheckpointSegment ops_of_blocks(const Graph& g, int64_t lo, int64_t hi) {
  CheckpointSegment seg;
  for (const Op& o : g.ops())
    if (o.phase == Phase::Forward && o.block >= lo && o.block <= hi) seg.push_back(o.id);
  return seg;
}

std::vector<CheckpointSegment> every_k_blocks(const Graph& g, int64_t k) {
  std::vector<CheckpointSegment> out;
  const auto n = static_cast<int64_t>(g.blocks.size());
  for (int64_t lo = 0; lo < n; lo += k) out.push_back(ops_of_blocks(g, lo, std::min(n, lo + k) - 1));
  return out;
}

// A model without blocks as checkpoint_sequential sees an nn.Sequential: its forward ops before the loss, each a
// layer, except that an op writing a tensor an earlier op wrote (in place) joins that op's layer, with every
// layer in between (a segment must not modify a tensor another segment made). An op in place on the model's input
// (a ReLU(inplace=True) first) is in no layer: re-running it would apply it twice to a tensor the replay cannot make
// again (simulation fuzzer, seed 91005944).
std::vector<CheckpointSegment> forward_op_layers(const Graph& g) {
  std::vector<OpId> ops;
  for (const Op& o : g.ops()) {
    if (o.phase != Phase::Forward) continue;
    if (o.kind == OpKind::CrossEntropyLoss) break;
    ops.push_back(o.id);
  }
  std::vector<int> writer(g.tensors().size(), -1);  // tensor -> index in ops of its first writer
  std::vector<char> starts(ops.size(), 1);          // ops[i] starts a layer
  std::vector<char> left_out(ops.size(), 0);        // ops[i] is in no layer
  // The model's input, which no op makes: an op in place on it is left out, and so is every later one (simulation
  // fuzzer, seed 92002218: two ReLU(inplace=True) in a row). Persistent state updated in place (batch norm's running
  // statistics) is re-updated by a replay, as torch.utils.checkpoint does.
  auto outside = [&](TensorId t) { return g.tensor(t).kind == TensorKind::Input; };
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = g.op(ops[i]);
    for (TensorId t : op.outputs)
      if (outside(t) && std::count(op.inputs.begin(), op.inputs.end(), t)) left_out[i] = 1;
    for (TensorId t : op.outputs) {
      int& w = writer[static_cast<size_t>(t)];
      if (w < 0) {
        w = static_cast<int>(i);
      } else {
        for (size_t j = static_cast<size_t>(w) + 1; j <= i; ++j) starts[j] = 0;
      }
    }
  }
  std::vector<CheckpointSegment> layers;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (left_out[i]) continue;
    if (starts[i] || layers.empty()) layers.emplace_back();
    layers.back().push_back(ops[i]);
  }
  return layers;
}

}  // namespace

const ParamBindings<CheckpointOptions>& CheckpointOptions::parameters() {
  using O = CheckpointOptions;
  static const auto b = ParamBindings<O>()
      .add("every", &O::every, "blocks per segment, consecutive across stages (ResNet blocks, transformer layers)",
           ParamCheck::at_least(1))
      .add("segments", &O::segments,
           "explicit segments as block ranges, e.g. 0-3,4-7,9 (0-based, inclusive, ascending); replaces every",
           ParamCheck::string_where([](const std::string& s) { return s.empty() || parse_ranges(s).has_value(); },
                                    "empty or block ranges like 0-3,4-7,9 (ascending, not overlapping)"))
      .add("selective", &O::selective,
           "selective checkpointing as torchtitan's selective_ac_option: op (per-op: the outputs of every other "
           "mm and of attention are saved, the rest recomputed, per segment) or N (every N-th block checkpointed "
           "alone); empty: the whole segment",
           ParamCheck::string_where([](const std::string& s) { return parse_selective(s).has_value(); },
                                    "empty, op, or a positive integer"));
  return b;
}

std::vector<CheckpointSegment> checkpoint_segments(const Graph& g, const CheckpointOptions& o) {
  const std::string key = o.segments.empty() ? "every" : "segments";
  if (g.blocks.empty())
    throw ConfigError(g.name, 0, key,
                      "model '" + g.name + "' has no block structure to checkpoint (only the zoo's ResNets, BERT "
                      "and GPT-2 declare blocks; an ONNX import has none); use swap 'sqrt', which falls back to "
                      "the forward op chain");
  if (o.every < 1) throw ConfigError(g.name, 0, "every", "must be >= 1, got " + std::to_string(o.every));
  const auto sel = parse_selective(o.selective);
  if (!sel) throw ConfigError(g.name, 0, "selective", "'" + o.selective + "' is not empty, op or a positive integer");
  if (sel->mode == SelectiveCheckpointing::Mode::Layer) {
    if (o.every != 1 || !o.segments.empty())
      throw ConfigError(g.name, 0, "selective", "selective: " + o.selective + " checkpoints every " + o.selective +
                                                     "-th block alone: leave every at 1 and segments empty");
    std::vector<CheckpointSegment> out;
    for (int64_t b : layer_policy_blocks(static_cast<int64_t>(g.blocks.size()), sel->layer_every))
      out.push_back(ops_of_blocks(g, b, b));
    return out;
  }
  if (o.segments.empty()) return every_k_blocks(g, o.every);
  const auto ranges = parse_ranges(o.segments);
  if (!ranges) throw ConfigError(g.name, 0, "segments", "'" + o.segments + "' is not a list of ascending block ranges like 0-3,4-7,9");
  std::vector<CheckpointSegment> out;
  for (const auto& [lo, hi] : *ranges) {
    if (hi >= static_cast<int64_t>(g.blocks.size()))
      throw ConfigError(g.name, 0, "segments", "segment " + std::to_string(lo) + "-" + std::to_string(hi) + " names block " +
                                                   std::to_string(hi) + ", but '" + g.name + "' has " + block_list(g));
    out.push_back(ops_of_blocks(g, lo, hi));
  }
  return out;
}

std::vector<CheckpointSegment> policy_segments(const std::string& policy, const Params& p, const Graph& g) {
  if (policy == "sqrt") return sqrt_segments(g);
  if (policy == "checkpoint") return checkpoint_segments(g, CheckpointOptions::parameters().from_params(p));
  throw ConfigError("", 0, "swap", "'" + policy + "' is not a checkpointing policy (checkpoint, sqrt)");
}

std::vector<std::vector<OpId>> checkpoint_saved_ops(const Graph& g, const CheckpointOptions& o,
                                                    const std::vector<CheckpointSegment>& segments) {
  const auto sel = parse_selective(o.selective);
  if (!sel || sel->mode != SelectiveCheckpointing::Mode::Op) return {};
  std::vector<std::vector<OpId>> out;
  for (const CheckpointSegment& seg : segments) out.push_back(op_policy_saved_ops(g, seg));
  return out;
}

SwapPlan policy_plan(const std::string& policy, const Params& p, const Graph& g, const std::vector<OpId>& order) {
  const std::vector<CheckpointSegment> segments = policy_segments(policy, p, g);
  if (policy != "checkpoint") return checkpoint_plan(g, order, segments);
  const CheckpointOptions o = CheckpointOptions::parameters().from_params(p);
  return checkpoint_plan(g, order, segments, true, checkpoint_saved_ops(g, o, segments));
}

int64_t sqrt_segment_blocks(int64_t n) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::floor(std::sqrt(static_cast<double>(n)) + 0.5)));
}

std::vector<CheckpointSegment> sqrt_segments(const Graph& g) {
  if (!g.blocks.empty()) return every_k_blocks(g, sqrt_segment_blocks(static_cast<int64_t>(g.blocks.size())));
  const std::vector<CheckpointSegment> layers = forward_op_layers(g);
  const auto k = static_cast<size_t>(sqrt_segment_blocks(static_cast<int64_t>(layers.size())));
  std::vector<CheckpointSegment> out;
  for (size_t i = 0; i < layers.size(); ++i) {
    if (i % k == 0) out.emplace_back();
    out.back().insert(out.back().end(), layers[i].begin(), layers[i].end());
  }
  return out;
}

namespace {
// A later segment's replay reads an earlier segment's output (its input) before the earlier segment's own
// recomputation; when no op of the order reads it between that replay and the drop, the drop's default point (its
// last use by an op before `before`) would free it before the replay needs it. Such a drop is freed right after the
// op at the last replay that reads it instead (torch.utils.checkpoint's closure of the later segment holds it until
// that segment's backward is done).
// Autocast's weight-cast cache: a parameter cast to the 16-bit type inside autocast is cached until the outermost
// autocast region exits (the end of the forward pass and the loss), however the segment around it is checkpointed:
// torch.utils.checkpoint's hooks drop what autograd saves, not what the cache holds. Only casts of leaf tensors are
// cached: not FSDP's parameters, views of its flat parameter. A checkpointed segment's
// weight casts are freed there, not after their last use (Hugging Face's checkpointed Qwen2.5-0.5B holds 0.7 GiB
// of them at the loss, recorded with PyTorch 2.11).
bool autocast_cached(const Graph& g, const Op& op) {
  return op.kind == OpKind::Copy && op.has_attr(Attr::cast) && op.inputs.size() == 1 &&
         g.tensor(op.inputs[0]).learnable;
}

void extend_drops_past_replay_reads(const Graph& g, const std::vector<OpId>& order, SwapPlan& plan) {
  std::vector<std::vector<int>> replay_reads(g.tensors().size());  // tensor -> positions of replays reading it
  for (const Recomputation& r : plan.recomputations) {
    std::vector<char> made(g.tensors().size(), 0);
    for (OpId o : r.ops) {
      for (TensorId t : g.op(o).inputs)
        if (!made[static_cast<size_t>(t)]) replay_reads[static_cast<size_t>(t)].push_back(r.before);
      for (TensorId t : g.op(o).outputs) made[static_cast<size_t>(t)] = 1;
    }
  }
  const std::vector<std::vector<int>> points = resolve_drop_points(g, order, plan);
  for (size_t i = 0; i < plan.recomputations.size(); ++i) {
    Recomputation& r = plan.recomputations[i];
    for (size_t d = 0; d < r.drops.size(); ++d) {
      int point = points[i][d];
      for (int p : replay_reads[static_cast<size_t>(r.drops[d].tensor)])
        if (p < r.before) point = std::max(point, p);
      if (point != points[i][d]) r.drops[d].free_after = point;
    }
  }
}
}  // namespace

SwapPlan checkpoint_plan(const Graph& g, const std::vector<OpId>& order, const std::vector<CheckpointSegment>& segments,
                         bool autocast_cache, const std::vector<std::vector<OpId>>& saved_ops) {
  if (!saved_ops.empty() && saved_ops.size() != segments.size())
    throw std::invalid_argument("checkpoint_plan: " + std::to_string(saved_ops.size()) + " lists of saved ops for " +
                                std::to_string(segments.size()) + " segments");
  const bool selective = !saved_ops.empty();
  const int n = static_cast<int>(order.size());
  std::vector<int> pos_of(g.ops().size(), -1);
  for (int p = 0; p < n; ++p) pos_of.at(static_cast<size_t>(order[static_cast<size_t>(p)])) = p;
  // forward op -> the positions of its backward ops
  std::vector<std::vector<int>> backward_at(g.ops().size());
  for (int p = 0; p < n; ++p) {
    const Op& b = g.op(order[static_cast<size_t>(p)]);
    if (b.phase == Phase::Backward && b.forward_op >= 0) backward_at[static_cast<size_t>(b.forward_op)].push_back(p);
  }
  const std::vector<Lifetime> life = tensor_lifetimes(g, order);
  int last_forward = -1;  // where autocast exits: its cached weight casts are freed after this position
  for (int p = 0; p < n; ++p)
    if (g.op(order[static_cast<size_t>(p)]).phase == Phase::Forward) last_forward = p;
  std::vector<std::vector<int>> written_at(g.tensors().size());  // tensor -> positions of the ops writing it
  for (int p = 0; p < n; ++p)
    for (TensorId t : g.op(order[static_cast<size_t>(p)]).outputs) written_at[static_cast<size_t>(t)].push_back(p);

  SwapPlan plan;
  for (size_t si = 0; si < segments.size(); ++si) {
    const CheckpointSegment& seg = segments[si];
    // Selective: the outputs its policy saves (MUST_SAVE), kept by the cache instead of recomputed.
    std::vector<char> saved(g.tensors().size(), 0);
    if (selective)
      for (OpId o : saved_ops[si])
        for (TensorId t : g.op(o).outputs)
          if (!g.tensor(t).persistent) saved[static_cast<size_t>(t)] = 1;
    // The segment's inputs: what an op reads before any op of the segment wrote it.
    std::vector<char> written(g.tensors().size(), 0), input(g.tensors().size(), 0);
    for (OpId o : seg) {
      for (TensorId t : g.op(o).inputs)
        if (!written[static_cast<size_t>(t)]) input[static_cast<size_t>(t)] = 1;
      for (TensorId t : g.op(o).outputs) written[static_cast<size_t>(t)] = 1;
    }
    Recomputation r;
    std::vector<char> dropped(g.tensors().size(), 0);
    int before = n;
    for (OpId f : seg) {
      for (int p : backward_at[static_cast<size_t>(f)]) {
        bool reads_saved = false;
        for (TensorId t : g.op(order[static_cast<size_t>(p)]).inputs) {
          const Tensor& x = g.tensor(t);
          if (x.kind == TensorKind::Gradient) continue;
          reads_saved = true;
          if (x.kind == TensorKind::Activation && !x.persistent && written[static_cast<size_t>(t)] &&
              !input[static_cast<size_t>(t)] && !saved[static_cast<size_t>(t)])
            dropped[static_cast<size_t>(t)] = 1;
        }
        if (reads_saved) before = std::min(before, p);
      }
    }
    if (before == n) continue;  // the segment saves nothing: nothing to recompute
    // The replay runs the segment's ops in the schedule's order (a concurrency policy may reorder them), and only
    // those that ran before it: a schedule may put a forward op the loss does not wait for after the first
    // backward ops. A tensor such an op writes stays (it cannot be made again in time).
    CheckpointSegment in_order = seg;
    std::stable_sort(in_order.begin(), in_order.end(),
                     [&](OpId a, OpId b) { return pos_of[static_cast<size_t>(a)] < pos_of[static_cast<size_t>(b)]; });
    while (!in_order.empty() && pos_of[static_cast<size_t>(in_order.back())] >= before) {
      for (TensorId t : g.op(in_order.back()).outputs) dropped[static_cast<size_t>(t)] = 0;
      in_order.pop_back();
    }
    for (OpId o : in_order)  // drops in the order the segment writes them, each once
      for (TensorId t : g.op(o).outputs)
        if (dropped[static_cast<size_t>(t)] == 1) {
          const bool cached = autocast_cache && autocast_cached(g, g.op(o)) && last_forward < before;
          r.drops.push_back({t, cached ? last_forward : -1});
          dropped[static_cast<size_t>(t)] = 2;
        }
    if (r.drops.empty()) continue;
    // Selective: the recomputation stops early (torch.utils.checkpoint's early stop) once the last op whose
    // backward reads a saved tensor (whose holders the replay fills) has run again; a saved output is taken from
    // the cache, its op not run, and held until then.
    size_t stop = in_order.size();
    if (selective) {
      stop = 0;
      for (size_t i = 0; i < in_order.size(); ++i)
        for (int p : backward_at[static_cast<size_t>(in_order[i])])
          for (TensorId t : g.op(order[static_cast<size_t>(p)]).inputs)
            if (g.tensor(t).kind != TensorKind::Gradient) stop = i + 1;
      for (OpId o : in_order)
        for (TensorId t : g.op(o).outputs)
          if (saved[static_cast<size_t>(t)] && g.tensor(t).kind == TensorKind::Activation) r.held.push_back(t);
    }
    for (size_t i = 0; i < stop; ++i) {
      const OpId o = in_order[i];
      bool needed = false;  // some output is not on the device at `before` (a saved one is, in the cache)
      for (TensorId t : g.op(o).outputs) {
        const Tensor& x = g.tensor(t);
        const Lifetime& l = life[static_cast<size_t>(t)];
        needed |= !x.persistent && !saved[static_cast<size_t>(t)] &&
                  (dropped[static_cast<size_t>(t)] != 0 || l.first > before || l.last < before);
      }
      if (needed) r.ops.push_back(o);
    }
    // A replay must read what the first run read. An op outside the segment that writes one of its inputs in
    // between (an optimizer step a concurrency policy overlaps with the backward pass, updating a weight a
    // mixed-precision cast re-reads) makes the recomputed values differ: such a segment is not checkpointed.
    std::vector<char> in_seg_op(g.ops().size(), 0);
    for (OpId o : seg) in_seg_op[static_cast<size_t>(o)] = 1;
    bool stale = false;
    for (OpId o : r.ops)
      for (TensorId t : g.op(o).inputs)
        for (int q : written_at[static_cast<size_t>(t)])
          stale |= q > pos_of[static_cast<size_t>(o)] && q < before && !in_seg_op[static_cast<size_t>(order[static_cast<size_t>(q)])];
    if (stale) continue;
    r.before = before;
    plan.recomputations.push_back(std::move(r));
  }
  extend_drops_past_replay_reads(g, order, plan);
  return plan;
}

namespace {
nlohmann::json plan_report(const Graph& g, const std::vector<CheckpointSegment>& segments, const SwapPlan& plan) {
  uint64_t dropped = 0, held = 0;
  size_t replayed = 0;
  for (const Recomputation& r : plan.recomputations) {
    for (const auto& d : r.drops) dropped += g.tensor(d.tensor).bytes;
    for (TensorId t : r.held) held += g.tensor(t).bytes;
    replayed += r.ops.size();
  }
  nlohmann::json j = {{"segments", segments.size()},
                      {"recomputations", plan.recomputations.size()},
                      {"dropped_bytes", dropped},
                      {"replayed_ops", replayed}};
  if (held > 0) j["selective_saved_bytes"] = held;
  return j;
}
}  // namespace

SwapResult CheckpointSwap::plan(const SwapContext& ctx) {
  const std::vector<CheckpointSegment> segments = checkpoint_segments(ctx.graph, o_);
  SwapResult out;
  out.plan = checkpoint_plan(ctx.graph, ctx.schedule.order, segments, true, checkpoint_saved_ops(ctx.graph, o_, segments));
  out.report = plan_report(ctx.graph, segments, out.plan);
  if (!o_.selective.empty()) out.report["selective"] = o_.selective;
  return out;
}

SwapResult SqrtCheckpointSwap::plan(const SwapContext& ctx) {
  const std::vector<CheckpointSegment> segments = sqrt_segments(ctx.graph);
  SwapResult out;
  out.plan = checkpoint_plan(ctx.graph, ctx.schedule.order, segments);
  out.report = plan_report(ctx.graph, segments, out.plan);
  out.report["blocks"] = ctx.graph.blocks.size();
  return out;
}

}  // namespace dlsim
