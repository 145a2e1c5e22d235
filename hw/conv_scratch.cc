#include "hw/conv_scratch.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "hw/fitted/op_kernel_shapes.h"
#include "hw/math_path.h"
#include "workloads/shape.h"

namespace dlsim {

namespace {

constexpr uint64_t kConvScratchBlock = 512;  // the caching allocator's smallest block: what a request rounds to
constexpr int64_t kConvScratchMaxDim = int64_t{1} << 30;
// Added to a dense neighbour's distance from a grouped convolution: any grouped entry is nearer.
constexpr double kConvScratchOtherGrouping = 1e6;
constexpr int64_t kConvScratchMaxNeighbours = 64;

const char* conv_scratch_pass(OpKind k) {
  switch (k) {
    case OpKind::Conv2d: return "fwd";
    case OpKind::Conv2dBwdData: return "dgrad";
    case OpKind::Conv2dBwdFilter: return "wgrad";
    default: return nullptr;
  }
}

bool conv_scratch_16bit(DType t) { return t == DType::F16 || t == DType::BF16; }

int64_t conv_scratch_int(const YamlMap& e, const std::string& key, int64_t lo) {
  const int64_t v = e.get_int(key);
  if (v < lo || v > kConvScratchMaxDim)
    e.fail(key, "must be in [" + std::to_string(lo) + ", " + std::to_string(kConvScratchMaxDim) + "], got " +
                    std::to_string(v));
  return v;
}

std::string conv_scratch_choice(const YamlMap& e, const std::string& key, const std::set<std::string>& allowed) {
  std::string v = e.get_string(key);
  if (!allowed.count(v)) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    e.fail(key, "must be one of " + list + ", got '" + v + "'");
  }
  return v;
}

// Gives op `id` a workspace of `bytes`: resizes the tensor it has, or adds one (none for 0 bytes).
void set_workspace(Graph& g, OpId id, uint64_t bytes) {
  Op& op = g.op(id);
  if (op.workspace != kNoTensor) {
    g.tensor(op.workspace).bytes = bytes;
    g.tensor(op.workspace).shape = {static_cast<int64_t>(bytes)};
    return;
  }
  if (bytes == 0) return;
  Tensor t;
  t.name = op.name + ".workspace";
  t.kind = TensorKind::Workspace;
  t.dtype = DType::U8;
  t.shape = {static_cast<int64_t>(bytes)};
  t.bytes = bytes;
  const TensorId ws = g.add_tensor(std::move(t));
  g.op(id).workspace = ws;
}

// How a convolution is grouped, for cuDNN's choice of algorithm: dense, depthwise (one channel per group) or grouped.
enum class ConvGrouping { kDense, kDepthwise, kGrouped };
ConvGrouping conv_scratch_grouping(int64_t groups, int64_t c) {
  return groups == 1 ? ConvGrouping::kDense : groups == c ? ConvGrouping::kDepthwise : ConvGrouping::kGrouped;
}

// Whether each group's input and output channels fill 16-byte vectors, which cuDNN's channels-last tensor-core
// kernels load: a first layer's 3 channels do not, and cuDNN runs it otherwise (VGG's asks no scratch at all).
bool conv_scratch_aligned(int64_t c, int64_t k, int64_t groups, const std::string& dtype) {
  const int64_t elem = dtype == "f32" ? 4 : 2;
  return (c / groups) * elem % 16 == 0 && (k / groups) * elem % 16 == 0;
}

// The bytes a convolution's workspace is set against when an entry of another geometry serves it: its input,
// output and filter at `batch` (cuDNN's scratch holds layout transforms of the activations, split-K partial
// filters, or im2col tiles, each of which grows with one of them).
double conv_scratch_operand_bytes(const ConvSizes& z) {
  return static_cast<double>(z.n) * static_cast<double>(z.c * z.h * z.w + z.k * z.out_h() * z.out_w()) +
         static_cast<double>(z.k * (z.c / z.groups) * z.r * z.s);
}

// An entry's geometry at `batch` as the convolution sizes an op has.
ConvSizes conv_scratch_sizes(const GpuSpec::ConvScratchRecord& rec, int64_t batch) {
  ConvSizes z;
  z.n = batch, z.c = rec.c, z.h = rec.h, z.w = rec.w, z.k = rec.k, z.r = rec.r, z.s = rec.s;
  z.stride_h = rec.stride_h, z.stride_w = rec.stride_w, z.pad_h = rec.pad_h, z.pad_w = rec.pad_w;
  z.dilation = rec.dilation, z.groups = rec.groups;
  return z;
}

}  // namespace

std::string conv_scratch_key(const std::string& pass, const std::string& dtype, const std::string& layout, int64_t c,
                             int64_t h, int64_t w, int64_t k, int64_t r, int64_t s, int64_t stride_h,
                             int64_t stride_w, int64_t pad_h, int64_t pad_w, int64_t dilation, int64_t groups) {
  auto n = [](int64_t v) { return std::to_string(v); };
  return pass + " " + dtype + " " + layout + " c=" + n(c) + " h=" + n(h) + " w=" + n(w) + " k=" + n(k) +
         " r=" + n(r) + " s=" + n(s) + " stride=" + n(stride_h) + "x" + n(stride_w) + " pad=" + n(pad_h) + "x" +
         n(pad_w) + " dilation=" + n(dilation) + " groups=" + n(groups);
}

std::vector<const GpuSpec::ConvScratchRecord*> conv_scratch_nearest(const GpuSpec& spec, const std::string& pass,
                                                                   const ConvSizes& z, const ConvScratchKey& of,
                                                                   size_t count) {
  const ConvGrouping grouping = conv_scratch_grouping(z.groups, z.c);
  const bool aligned = conv_scratch_aligned(z.c, z.k, z.groups, of.dtype);
  auto log2_ratio = [](int64_t x, int64_t y) {
    return std::abs(std::log2(static_cast<double>(x) / static_cast<double>(y)));
  };
  std::vector<std::pair<double, const GpuSpec::ConvScratchRecord*>> near;
  for (const auto& [key, rec] : spec.conv_scratch) {  // in key order, which a stable sort keeps on equal distances
    if (rec.pass != pass || rec.dtype != of.dtype || rec.layout != of.layout || rec.r != z.r || rec.s != z.s ||
        rec.stride_h != z.stride_h || rec.stride_w != z.stride_w || rec.dilation != z.dilation ||
        rec.by_batch.empty() || conv_scratch_aligned(rec.c, rec.k, rec.groups, rec.dtype) != aligned)
      continue;
    // A grouped convolution without a grouped neighbour takes a dense one's: fp32 NCHW grouped convolutions run in
    // cuDNN's channels-last kernels between layout transposes (hw/fitted/conv_backend.h), as dense ones do.
    const ConvGrouping rec_grouping = conv_scratch_grouping(rec.groups, rec.c);
    const bool dense_for_grouped = grouping == ConvGrouping::kGrouped && rec_grouping == ConvGrouping::kDense;
    if (rec_grouping != grouping && !dense_for_grouped) continue;
    near.emplace_back((dense_for_grouped ? kConvScratchOtherGrouping : 0.0) + log2_ratio(rec.c, z.c) +
                          log2_ratio(rec.k, z.k) + log2_ratio(rec.h * rec.w, z.h * z.w),
                      &rec);
  }
  std::stable_sort(near.begin(), near.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const GpuSpec::ConvScratchRecord*> out;
  for (size_t i = 0; i < near.size() && i < count; ++i) out.push_back(near[i].second);
  return out;
}

uint64_t conv_scratch_scaled(const GpuSpec::ConvScratchRecord& rec, const ConvSizes& z, int64_t batch) {
  // The measured batch nearest the op's (the larger on a tie).
  const std::pair<int64_t, uint64_t>* at = nullptr;
  for (const auto& e : rec.by_batch)
    if (!at || std::llabs(e.first - batch) <= std::llabs(at->first - batch)) at = &e;
  const bool same_geometry = rec.c == z.c && rec.h == z.h && rec.w == z.w && rec.k == z.k &&
                             rec.pad_h == z.pad_h && rec.pad_w == z.pad_w && rec.groups == z.groups;
  // The same geometry scales with the batch alone, as before nearest entries existed; another one by its operands.
  ConvSizes op = z;
  op.n = batch;
  const double scale = same_geometry ? static_cast<double>(batch) / static_cast<double>(at->first)
                                     : conv_scratch_operand_bytes(op) /
                                           conv_scratch_operand_bytes(conv_scratch_sizes(rec, at->first));
  const double scaled = static_cast<double>(at->second) * scale;
  return (static_cast<uint64_t>(scaled + 0.999999) + kConvScratchBlock - 1) / kConvScratchBlock * kConvScratchBlock;
}

std::optional<ConvScratchKey> conv_scratch_key_of_op(const Graph& g, const Op& op, const char* pass_override) {
  const char* pass = conv_scratch_pass(op.kind);
  if (!pass) return std::nullopt;
  if (pass_override) pass = pass_override;
  const auto z = conv_sizes_of_op(g, op);
  if (!z) return std::nullopt;
  const DType t = compute_dtype(g, op);
  // A 16-bit convolution runs channels-last in dlsim's graph (workloads/memory_format.h), as the probe ran it.
  const bool nhwc = op.attr(Attr::channels_last) != 0 || conv_scratch_16bit(t);
  const std::string layout = nhwc ? "nhwc" : "nchw";
  return ConvScratchKey{conv_scratch_key(pass, to_string(t), layout, z->c, z->h, z->w, z->k, z->r, z->s, z->stride_h,
                                         z->stride_w, z->pad_h, z->pad_w, z->dilation, z->groups),
                        z->n, to_string(t), layout};
}

std::vector<OpId> conv_backward_partner(const Graph& g) {
  // Both graphs name a convolution's backward ops after one stem: the zoo's synthesis the forward op's name
  // (workloads/training_backward.cc), a recorded step the convolution_backward call's (workloads/torch_step_kinds.cc).
  constexpr std::string_view kData = ".bwd_data", kFilter = ".bwd_filter";
  auto stem = [](const std::string& name, std::string_view suffix) -> std::optional<std::string> {
    if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      return std::nullopt;
    return name.substr(0, name.size() - suffix.size());
  };
  std::map<std::string, size_t> dgrad_of;
  for (size_t i = 0; i < g.ops().size(); ++i)
    if (const Op& o = g.ops()[i]; o.kind == OpKind::Conv2dBwdData)
      if (auto s = stem(o.name, kData)) dgrad_of.emplace(*s, i);
  std::vector<OpId> partner(g.ops().size(), -1);
  for (size_t i = 0; i < g.ops().size(); ++i) {
    const Op& o = g.ops()[i];
    if (o.kind != OpKind::Conv2dBwdFilter) continue;
    const auto s = stem(o.name, kFilter);
    const auto it = s ? dgrad_of.find(*s) : dgrad_of.end();
    if (it == dgrad_of.end()) continue;
    partner[i] = static_cast<OpId>(it->second);
    partner[it->second] = static_cast<OpId>(i);
  }
  return partner;
}

void read_conv_scratch(const YamlMap& top, GpuSpec& spec) {
  if (top.has("conv_scratch_neighbours")) {
    const int64_t k = top.get_int("conv_scratch_neighbours");
    if (k < 0 || k > kConvScratchMaxNeighbours)
      top.fail("conv_scratch_neighbours",
               "must be in [0, " + std::to_string(kConvScratchMaxNeighbours) + "], got " + std::to_string(k));
    spec.conv_scratch_neighbours = static_cast<size_t>(k);
  }
  if (!top.has("conv_scratch")) return;
  YAML::Node list = top.get("conv_scratch");
  if (list.IsNull()) return;  // "conv_scratch:" with nothing after it: an empty table
  if (!list.IsSequence()) top.fail("conv_scratch", "expected a list of {pass, dtype, layout, n, c, h, w, ..., bytes}");
  for (size_t i = 0; i < list.size(); ++i) {
    YamlMap e(list[i], top.file(), "conv_scratch[" + std::to_string(i) + "]");
    e.check_keys({"pass", "dtype", "layout", "n", "c", "h", "w", "k", "r", "s", "stride_h", "stride_w", "pad_h",
                  "pad_w", "dilation", "groups", "bytes"});
    const std::string pass = conv_scratch_choice(e, "pass", {"fwd", "dgrad", "wgrad", "bwd"});
    const std::string dtype = conv_scratch_choice(e, "dtype", {"f32", "f16", "bf16"});
    const std::string layout = conv_scratch_choice(e, "layout", {"nchw", "nhwc"});
    const int64_t n = conv_scratch_int(e, "n", 1);
    GpuSpec::ConvScratchRecord r;
    r.pass = pass;
    r.dtype = dtype;
    r.layout = layout;
    r.c = conv_scratch_int(e, "c", 1);
    r.h = conv_scratch_int(e, "h", 1);
    r.w = conv_scratch_int(e, "w", 1);
    r.k = conv_scratch_int(e, "k", 1);
    r.r = conv_scratch_int(e, "r", 1);
    r.s = conv_scratch_int(e, "s", 1);
    r.stride_h = conv_scratch_int(e, "stride_h", 1);
    r.stride_w = conv_scratch_int(e, "stride_w", 1);
    r.pad_h = conv_scratch_int(e, "pad_h", 0);
    r.pad_w = conv_scratch_int(e, "pad_w", 0);
    r.dilation = conv_scratch_int(e, "dilation", 1);
    r.groups = conv_scratch_int(e, "groups", 1);
    const std::string key = conv_scratch_key(pass, dtype, layout, r.c, r.h, r.w, r.k, r.r, r.s, r.stride_h,
                                             r.stride_w, r.pad_h, r.pad_w, r.dilation, r.groups);
    const int64_t bytes = e.get_int("bytes");
    if (bytes < 0 || static_cast<uint64_t>(bytes) > kMaxTensorBytes)
      e.fail("bytes", "must be in [0, " + std::to_string(kMaxTensorBytes) + "], got " + std::to_string(bytes));
    auto& at = spec.conv_scratch.emplace(key, std::move(r)).first->second.by_batch;
    if (std::any_of(at.begin(), at.end(), [n](const auto& b) { return b.first == n; }))
      e.fail("n", "a second entry for '" + key + "' at batch " + std::to_string(n));
    at.emplace_back(n, static_cast<uint64_t>(bytes));
    std::sort(at.begin(), at.end());
  }
}

ConvScratchCoverage apply_conv_scratch(Graph& g, const GpuSpec& spec) {
  ConvScratchCoverage c;
  if (spec.conv_scratch.empty()) return c;
  const std::vector<OpId> partner = conv_backward_partner(g);
  for (size_t i = 0; i < g.ops().size(); ++i) {
    const Op& op = g.ops()[i];
    const auto key = conv_scratch_key_of_op(g, op);
    if (!key) continue;
    ++c.convolutions;
    const ConvSizes z = *conv_sizes_of_op(g, op);
    // The entry of `pass` for the op's geometry, or with `nearest` the nearest geometry's (conv_scratch_nearest),
    // scaled to the op and rounded up to the allocator's 512 B; nullopt without one.
    auto entry = [&](const char* pass, bool nearest) -> std::optional<uint64_t> {
      const auto it = spec.conv_scratch.find(conv_scratch_key_of_op(g, op, pass)->key);
      if (it != spec.conv_scratch.end() && !it->second.by_batch.empty())
        return conv_scratch_scaled(it->second, z, key->batch);
      if (!nearest || spec.conv_scratch_neighbours == 0) return std::nullopt;
      std::vector<uint64_t> guesses;
      for (const auto* rec : conv_scratch_nearest(spec, pass, z, *key, spec.conv_scratch_neighbours))
        guesses.push_back(conv_scratch_scaled(*rec, z, key->batch));
      if (guesses.empty() || guesses.size() < spec.conv_scratch_neighbours) return std::nullopt;
      std::sort(guesses.begin(), guesses.end());
      return guesses[(guesses.size() - 1) / 2];  // the median (the lower of two)
    };
    // Which entry serves the op: the comment on apply_conv_scratch in the header says why. The op's own geometry's
    // entries decide where it has any; only an op with none takes its neighbours'.
    const bool paired = partner[i] >= 0;
    auto choose = [&](bool nearest) -> std::optional<uint64_t> {
      const std::optional<uint64_t> pair = entry("bwd", nearest);
      if (op.kind == OpKind::Conv2d) return entry("fwd", nearest);
      if (op.kind == OpKind::Conv2dBwdFilter) {
        std::optional<uint64_t> bytes = paired && pair ? pair : entry("wgrad", nearest);
        if (!bytes && !paired) bytes = pair;
        return bytes;
      }
      std::optional<uint64_t> bytes = entry("dgrad", nearest);
      if (paired && pair) {  // at most the call's peak less dW's bytes: the bwd entry bounds it
        uint64_t dw = 0;
        for (TensorId t : g.op(partner[i]).outputs) dw += g.tensor(t).bytes;
        bytes = std::min(bytes.value_or(0), *pair + dw);
      }
      return bytes;
    };
    std::optional<uint64_t> bytes = choose(false);
    const bool estimated = !bytes;
    if (estimated) bytes = choose(true);
    if (!bytes) continue;
    set_workspace(g, static_cast<OpId>(i), *bytes);
    ++(estimated ? c.estimated : c.sized);
  }
  return c;
}

}  // namespace dlsim
