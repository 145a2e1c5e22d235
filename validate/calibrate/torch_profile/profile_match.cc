#include "validate/calibrate/torch_profile/profile_match.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

namespace dlsim {
namespace {

// How far past the last match a forward op may be found: the graph may hold ops the trace shows no top-level op
// for (a recorded step's views, a zoo graph's layout transposes), but an op far ahead is another layer of the
// same kind and shape, which order says is not this one.
constexpr size_t kMatchWindow = 12;

std::string match_shape_text(const std::vector<int64_t>& s) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << "]";
  return o.str();
}

const std::vector<int64_t>* match_first_shape(const ProfileEvent& e) {
  for (const ProfileInput& in : e.inputs)
    if (in.is_tensor()) return &in.shape;
  return nullptr;
}

// Whether two shapes are one tensor's: equal, or a view of it (dlsim's graphs drop views) that merges trailing
// dimensions (a flatten: a linear layer after it reads the pooled [N, C, 1, 1] tensor the trace shows as [N, C]) or
// leading ones (aten::linear on [N, H, W, C] runs its addmm on the [N*H*W, C] view, whose storage a recording holds
// in that shape): the same number of elements and the same first or the same last dimension.
bool match_same_tensor(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (a == b) return true;
  if (a.empty() || b.empty() || (a.front() != b.front() && a.back() != b.back())) return false;
  int64_t na = 1, nb = 1;
  for (int64_t d : a) na *= d;
  for (int64_t d : b) nb *= d;
  return na == nb;
}

// The trace op's first tensor input is one of the graph op's inputs by shape (a graph op with no tensor inputs,
// or a trace op with no tensor shape, is not checked).
bool match_shapes_agree(const ProfileEvent& e, const Graph& g, const Op& op) {
  const std::vector<int64_t>* s = match_first_shape(e);
  if (s == nullptr || op.inputs.empty()) return true;
  for (TensorId t : op.inputs)
    if (t != kNoTensor && match_same_tensor(g.tensor(t).shape, *s)) return true;
  return false;
}

// The aten op a recorded graph's op was made from ("features.1.0.block.3/hardswish_#12" -> "aten::hardswish_",
// workloads/torch_step_graph.cc's names); "" for a zoo graph's op.
std::string match_recorded_aten(const Op& op) {
  const size_t hash = op.name.rfind('#');
  if (hash == std::string::npos) return "";
  const size_t slash = op.name.rfind('/', hash);
  const size_t from = slash == std::string::npos ? 0 : slash + 1;
  const std::string name = op.name.substr(from, hash - from);
  return name.find("::") == std::string::npos ? "aten::" + name : name;
}

// An aten name without its in-place mark: hardswish_ and hardswish are one op of dlsim's (what it writes is its
// inputs' and outputs' business, which the recording holds).
std::string match_out_of_place(const std::string& n) {
  return n.size() > 1 && n.back() == '_' ? n.substr(0, n.size() - 1) : n;
}

// The dispatcher-level op a composite op the profiler shows whole starts with, where the recording (below
// autograd) sees its parts: at::dropout_ and the unfused at::dropout are empty_like, bernoulli_, div_, mul(_).
std::string match_first_part(const std::string& n) {
  static const std::map<std::string, std::string> parts = {
      {"aten::dropout_", "aten::bernoulli_"}, {"aten::dropout", "aten::bernoulli_"},
      {"aten::feature_dropout_", "aten::bernoulli_"}, {"aten::feature_dropout", "aten::bernoulli_"}};
  auto it = parts.find(n);
  return it == parts.end() ? "" : it->second;
}

// Whether a graph op can be the trace's op by kind: one of the kinds the aten name stands for, or, for an op dlsim
// prices by its traffic (OpKind::Other, no kind for its aten op), the recording's own aten op of that name, in
// place or not, or the op a composite starts with.
bool match_kind_agrees(const std::string& name, const std::vector<OpKind>& kinds, const Op& op) {
  if (std::find(kinds.begin(), kinds.end(), op.kind) != kinds.end()) return true;
  if (op.kind != OpKind::Other) return false;
  const std::string recorded = match_out_of_place(match_recorded_aten(op));
  if (recorded.empty() || recorded == "aten::") return false;
  return recorded == match_out_of_place(name) || recorded == match_out_of_place(match_first_part(name));
}

// An op that moves no data and launches no kernel, which a recorded graph holds no op for (views) or none that
// the trace's op is (a bare allocation): PyTorch's view ops and the allocating factories. A reshape, flatten or
// contiguous that copies launches a kernel (a GPU trace shows it; a CPU trace launches none, and there it counts
// as a view).
bool match_moves_no_data(const ProfileEvent& e, const ProfileHostOp& h) {
  static const std::set<std::string> views = {
      "aten::view", "aten::_unsafe_view", "aten::reshape", "aten::flatten", "aten::unflatten", "aten::permute",
      "aten::transpose", "aten::t", "aten::expand", "aten::expand_as", "aten::view_as", "aten::squeeze",
      "aten::unsqueeze", "aten::select", "aten::slice", "aten::narrow", "aten::as_strided", "aten::alias",
      "aten::detach", "aten::split", "aten::chunk", "aten::unbind", "aten::contiguous",
      "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::new_empty", "aten::new_empty_strided"};
  return h.kernels == 0 && views.count(e.name) > 0;
}

bool match_is_bn_counter(const ProfileEvent& e) {
  return (e.name == "aten::add_" || e.name == "aten::add") && match_first_shape(e) == nullptr;
}

std::string match_place(const ProfilerTrace& t, const ProfileStep& s, size_t event) {
  const ProfileEvent& e = t.events[event];
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  o << "traceEvents[" << e.index << "] " << e.name;
  if (const auto* shape = match_first_shape(e)) o << " " << match_shape_text(*shape);
  o << " at +" << (e.ts_us - s.start_us) << " us in " << s.name;
  return o.str();
}

}  // namespace

std::vector<OpKind> profile_op_kinds(const std::string& n) {
  static const std::map<std::string, std::vector<OpKind>> kinds = {
      {"aten::conv2d", {OpKind::Conv2d}}, {"aten::convolution", {OpKind::Conv2d}},
      {"aten::_convolution", {OpKind::Conv2d}}, {"aten::cudnn_convolution", {OpKind::Conv2d}},
      {"aten::batch_norm", {OpKind::BatchNorm}}, {"aten::native_batch_norm", {OpKind::BatchNorm}},
      {"aten::_native_batch_norm_legit", {OpKind::BatchNorm}}, {"aten::cudnn_batch_norm", {OpKind::BatchNorm}},
      {"aten::layer_norm", {OpKind::LayerNorm}}, {"aten::native_layer_norm", {OpKind::LayerNorm}},
      {"aten::rms_norm", {OpKind::RmsNorm}},
      {"aten::relu", {OpKind::Relu}}, {"aten::relu_", {OpKind::Relu}},
      {"aten::hardtanh", {OpKind::Relu6}}, {"aten::hardtanh_", {OpKind::Relu6}},
      {"aten::max_pool2d", {OpKind::MaxPool}}, {"aten::max_pool2d_with_indices", {OpKind::MaxPool}},
      {"aten::avg_pool2d", {OpKind::AvgPool}},
      {"aten::adaptive_avg_pool2d", {OpKind::AdaptiveAvgPool, OpKind::GlobalAvgPool}},
      {"aten::mean", {OpKind::GlobalAvgPool, OpKind::AdaptiveAvgPool}},
      {"aten::add", {OpKind::Add}}, {"aten::add_", {OpKind::Add}},
      {"aten::mul", {OpKind::Mul}}, {"aten::mul_", {OpKind::Mul}},
      {"aten::cat", {OpKind::Concat}},
      {"aten::flatten", {OpKind::Flatten, OpKind::Reshape}}, {"aten::view", {OpKind::Reshape, OpKind::Flatten}},
      {"aten::reshape", {OpKind::Reshape, OpKind::Flatten}},
      {"aten::linear", {OpKind::Linear, OpKind::MatMul}}, {"aten::addmm", {OpKind::Linear, OpKind::MatMul}},
      {"aten::mm", {OpKind::MatMul, OpKind::Linear}}, {"aten::matmul", {OpKind::MatMul, OpKind::Linear}},
      {"aten::bmm", {OpKind::MatMul}},
      {"aten::dropout", {OpKind::Dropout}}, {"aten::native_dropout", {OpKind::Dropout}},
      {"aten::softmax", {OpKind::Softmax}}, {"aten::_softmax", {OpKind::Softmax}},
      {"aten::log_softmax", {OpKind::Softmax, OpKind::CrossEntropyLoss}},
      {"aten::gelu", {OpKind::Gelu}}, {"aten::silu", {OpKind::Silu}}, {"aten::silu_", {OpKind::Silu}},
      {"aten::embedding", {OpKind::Embedding}},
      {"aten::cross_entropy_loss", {OpKind::CrossEntropyLoss, OpKind::Softmax}},
      {"aten::scaled_dot_product_attention", {OpKind::FlashAttention}},
      {"aten::transpose", {OpKind::Transpose}}, {"aten::permute", {OpKind::Transpose}},
      {"aten::pad", {OpKind::Pad}}, {"aten::constant_pad_nd", {OpKind::Pad}},
  };
  auto it = kinds.find(n);
  return it == kinds.end() ? std::vector<OpKind>{} : it->second;
}

StepMatch match_profile_step(const ProfilerTrace& t, const ProfileStep& s, const Graph& g) {
  StepMatch m;
  m.step = &s;
  std::vector<OpId> fwd;
  for (const Op& op : g.ops())
    if (op.phase == Phase::Forward) fwd.push_back(op.id);
  m.graph_forward_ops = fwd.size();
  std::vector<uint8_t> used(fwd.size(), 0);
  size_t cursor = 0;
  const ProfileHostOp* pending_counter = nullptr;
  std::set<const ProfileHostOp*> no_op;  // forward ops that moved no data and the graph holds no op for
  for (const ProfileHostOp& h : s.forward) {
    const ProfileEvent& e = t.events[h.event];
    if (match_is_bn_counter(e)) {  // goes with the batch norm it precedes
      if (pending_counter) m.unmatched.push_back({pending_counter->event, match_place(t, s, pending_counter->event) +
                                                  ": a scalar add_ with no batch norm after it"});
      pending_counter = &h;
      continue;
    }
    const std::vector<OpKind> kinds = profile_op_kinds(e.name);
    size_t found = fwd.size();
    for (size_t i = cursor; i < fwd.size() && i < cursor + kMatchWindow; ++i) {
      const Op& op = g.op(fwd[i]);
      if (used[i] || !match_kind_agrees(e.name, kinds, op)) continue;
      if (!match_shapes_agree(e, g, op)) continue;
      found = i;
      break;
    }
    if (found == fwd.size() && match_moves_no_data(e, h)) {
      m.without_op.push_back(&h);
      no_op.insert(&h);
    } else if (found == fwd.size()) {
      const char* why = kinds.empty() ? ": dlsim has no op kind for it, and no op of the graph was recorded as it"
                                      : ": no forward op of that kind and shape next in the graph";
      m.unmatched.push_back({h.event, match_place(t, s, h.event) + why});
    } else {
      used[found] = 1;
      cursor = found + 1;
      MatchedForwardOp f;
      f.host = &h;
      f.graph_op = fwd[found];
      if (pending_counter && g.op(fwd[found]).kind == OpKind::BatchNorm) {
        f.bn_counter = pending_counter;
        pending_counter = nullptr;
      }
      m.forward.push_back(f);
    }
    if (pending_counter) {  // the op after it was no batch norm
      m.unmatched.push_back({pending_counter->event, match_place(t, s, pending_counter->event) +
                                                         ": a scalar add_ with no batch norm after it"});
      pending_counter = nullptr;
    }
  }
  if (pending_counter)
    m.unmatched.push_back({pending_counter->event,
                           match_place(t, s, pending_counter->event) + ": a scalar add_ with no batch norm after it"});
  for (size_t i = 0; i < fwd.size(); ++i)
    if (!used[i]) m.graph_unmatched.push_back(fwd[i]);

  // Autograd's nodes: the forward op that started at the largest sequence number not above the node's (every
  // forward op of the step, so that a node of an op that matched nothing is not given to the op before it). One
  // forward thread is assumed (the step's Python thread): "Fwd thread id" numbers threads the profiler's own way.
  std::map<int64_t, size_t> by_sequence;  // sequence -> index into s.forward
  for (size_t i = 0; i < s.forward.size(); ++i) {
    const ProfileEvent& e = t.events[s.forward[i].event];
    if (e.sequence && *e.sequence >= 0) by_sequence[*e.sequence] = i;  // a later op of equal number wins
  }
  std::map<const ProfileHostOp*, size_t> matched_at;  // forward host op -> index into m.forward
  for (size_t i = 0; i < m.forward.size(); ++i) matched_at[m.forward[i].host] = i;
  for (const ProfileHostOp& h : s.backward) {
    const ProfileEvent& e = t.events[h.event];
    if (is_accumulate_grad(e)) {
      m.accumulate_grad.push_back(&h);
      continue;
    }
    std::string why = ": an autograd node without a sequence number";
    if (e.sequence && *e.sequence >= 0) {
      auto it = by_sequence.upper_bound(*e.sequence);
      if (it == by_sequence.begin()) {
        why = ": no forward op of the step carries its sequence number";
      } else {
        const ProfileHostOp* fwd_op = &s.forward[std::prev(it)->second];
        auto at = matched_at.find(fwd_op);
        if (at != matched_at.end()) {
          m.forward[at->second].nodes.push_back(&h);
          continue;
        }
        if (no_op.count(fwd_op) && h.kernels == 0) {  // a view's node (PermuteBackward0): a view of the gradient
          m.without_op.push_back(&h);
          continue;
        }
        why = ": its forward op " + t.events[fwd_op->event].name + " (traceEvents[" +
              std::to_string(t.events[fwd_op->event].index) + "]) matched no graph op";
      }
    }
    m.unmatched.push_back({h.event, match_place(t, s, h.event) + why});
  }
  for (const ProfileHostOp& h : s.other)
    m.unmatched.push_back({h.event, match_place(t, s, h.event) + ": a host op outside forward, backward and the "
                                                                 "optimizer step"});
  std::stable_sort(m.unmatched.begin(), m.unmatched.end(),
                   [](const UnmatchedProfileOp& a, const UnmatchedProfileOp& b) { return a.event < b.event; });
  return m;
}

}  // namespace dlsim
