#include "hw/conv_scratch.h"

#include <algorithm>
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

}  // namespace

std::string conv_scratch_key(const std::string& pass, const std::string& dtype, const std::string& layout, int64_t c,
                             int64_t h, int64_t w, int64_t k, int64_t r, int64_t s, int64_t stride_h,
                             int64_t stride_w, int64_t pad_h, int64_t pad_w, int64_t dilation, int64_t groups) {
  auto n = [](int64_t v) { return std::to_string(v); };
  return pass + " " + dtype + " " + layout + " c=" + n(c) + " h=" + n(h) + " w=" + n(w) + " k=" + n(k) +
         " r=" + n(r) + " s=" + n(s) + " stride=" + n(stride_h) + "x" + n(stride_w) + " pad=" + n(pad_h) + "x" +
         n(pad_w) + " dilation=" + n(dilation) + " groups=" + n(groups);
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
  return ConvScratchKey{conv_scratch_key(pass, to_string(t), nhwc ? "nhwc" : "nchw", z->c, z->h, z->w, z->k, z->r,
                                         z->s, z->stride_h, z->stride_w, z->pad_h, z->pad_w, z->dilation, z->groups),
                        z->n};
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
    const std::string key = conv_scratch_key(
        pass, dtype, layout, conv_scratch_int(e, "c", 1), conv_scratch_int(e, "h", 1), conv_scratch_int(e, "w", 1),
        conv_scratch_int(e, "k", 1), conv_scratch_int(e, "r", 1), conv_scratch_int(e, "s", 1),
        conv_scratch_int(e, "stride_h", 1), conv_scratch_int(e, "stride_w", 1), conv_scratch_int(e, "pad_h", 0),
        conv_scratch_int(e, "pad_w", 0), conv_scratch_int(e, "dilation", 1), conv_scratch_int(e, "groups", 1));
    const int64_t bytes = e.get_int("bytes");
    if (bytes < 0 || static_cast<uint64_t>(bytes) > kMaxTensorBytes)
      e.fail("bytes", "must be in [0, " + std::to_string(kMaxTensorBytes) + "], got " + std::to_string(bytes));
    auto& at = spec.conv_scratch[key];
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
    // The entry of `pass` for the op's geometry, scaled to its batch from the nearest measured one (the larger on a
    // tie) and rounded up to the allocator's 512 B; nullopt without one.
    auto measured = [&](const char* pass) -> std::optional<uint64_t> {
      const auto it = spec.conv_scratch.find(conv_scratch_key_of_op(g, op, pass)->key);
      if (it == spec.conv_scratch.end() || it->second.empty()) return std::nullopt;
      const std::pair<int64_t, uint64_t>* best = nullptr;
      for (const auto& e : it->second)
        if (!best || std::llabs(e.first - key->batch) <= std::llabs(best->first - key->batch)) best = &e;
      const double scaled = static_cast<double>(best->second) * static_cast<double>(key->batch) /
                            static_cast<double>(best->first);
      return (static_cast<uint64_t>(scaled + 0.999999) + kConvScratchBlock - 1) / kConvScratchBlock *
             kConvScratchBlock;
    };
    // Which entry serves the op: the comment on apply_conv_scratch in the header says why.
    const bool paired = partner[i] >= 0;
    const std::optional<uint64_t> pair = measured("bwd");
    std::optional<uint64_t> bytes;
    if (op.kind == OpKind::Conv2d) {
      bytes = measured("fwd");
    } else if (op.kind == OpKind::Conv2dBwdFilter) {
      bytes = paired && pair ? pair : measured("wgrad");
      if (!bytes && !paired) bytes = pair;
    } else {
      bytes = measured("dgrad");
      if (paired && pair) {  // at most the call's peak less dW's bytes: the bwd entry bounds it
        uint64_t dw = 0;
        for (TensorId t : g.op(partner[i]).outputs) dw += g.tensor(t).bytes;
        bytes = std::min(bytes.value_or(0), *pair + dw);
      }
    }
    if (!bytes) continue;
    set_workspace(g, static_cast<OpId>(i), *bytes);
    ++c.sized;
  }
  return c;
}

}  // namespace dlsim
