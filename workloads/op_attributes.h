#pragma once
// The integer attributes an op may carry (kernel size, stride, axis, flags...), declared per op kind in one table
// (op_attributes.cc): each attribute has one spelling, a meaning, and for each kind that carries it a default or
// none. Op's accessors (graph.h) refuse an attribute that the op's kind does not declare, so that a builder setting
// a misspelt or misplaced attribute, or a reader asking for one, fails where it does so instead of reading a
// fallback.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/op_kind.h"

namespace dlsim {

// Every attribute, spelled as it is stored: the name that kernel signatures, calibrated kernel tables
// (configs/hw/*.yaml) and program files write, so that one search finds every use in code and data. A list
// attribute (perm, pad_begin, pad_end) is stored as one entry per element, the index appended (perm0, perm1, ...).
enum class Attr : uint8_t {
  adamw, algorithm, amp_scale_loss, autograd_clone, axis, batch, bias, blocks, blocks_per_sm, cast, causal,
  ceil_mode, channels, channels_last, chunk_bytes, classes, comm_stream, count_include_pad, dilation, dim, exponent,
  foreach, foreach_bytes, fused_bias, fused_mask_dropout, fused_relu, grad_all_reduce, groups, has_x_fp32, head_dim,
  heads, in_channels, in_features, index, inplace, k, kernel, kernel_h, kernel_w, launches, layout_transpose,
  lrn_size, m, macs, message_bytes,
  multi_tensor, n, n_rep, normalized, ns, out_channels, out_features, out_h, out_w, p_ppm, pad, pad_begin, pad_end,
  pad_h, pad_w, perm, ranks, ranks_per_node, rows, seq, seq_major, sm_permille, stride, stride_h, stride_w, tf32,
  transpose_b, view, vocab,
};
inline constexpr size_t kAttrCount = static_cast<size_t>(Attr::vocab) + 1;

const char* to_string(Attr a);     // the stored name
const char* meaning_of(Attr a);    // what the value says
bool is_list(Attr a);              // perm, pad_begin, pad_end
std::string stored_name(Attr a, size_t index);  // a list element's name: (perm, 2) -> "perm2"

// What a stored name spells: the attribute, and a list element's index; nullopt when it names no attribute.
struct AttrName {
  Attr attr;
  std::optional<size_t> index;
};
std::optional<AttrName> attr_named(std::string_view stored);

// One attribute of a kind's declaration, with its value when an op does not set it. No default: the builders
// always set it, and a reader that finds it missing (a hand-written program file) reports the op.
struct AttrDecl {
  AttrDecl(Attr a, std::optional<int64_t> default_value = std::nullopt) : attr(a), default_value(default_value) {}
  Attr attr;
  std::optional<int64_t> default_value;
};

// The declaration of `a` for an op of `kind` and sub-kind `other`, or nullptr when such an op may not carry it. A
// backward kind carries the attributes of the forward op it differentiates (the training synthesis copies them, so
// that a backend finds the forward's stride and padding on the backward op), a gradient accumulation those of
// whichever forward op it follows.
const AttrDecl* find_declaration(OpKind kind, OtherOp other, Attr a);
// Every attribute an op of `kind` and `other` may carry, own and carried, in the enum's order.
std::vector<AttrDecl> declared_attributes(OpKind kind, OtherOp other);
// The attributes the table lists for (kind, other) itself, without those it carries from forward kinds.
std::vector<AttrDecl> own_attributes(OpKind kind, OtherOp other);
// Whether the table declares (kind, other) at all: every OpKind with sub-kind None, and Other with each sub-kind.
bool has_declaration(OpKind kind, OtherOp other);
// Whether an op of `kind` may have sub-kind `other`: None always; a real sub-kind on an Other op, and on a gradient
// accumulation (which carries its forward op's sub-kind with its attributes).
bool may_carry(OpKind kind, OtherOp other);

}  // namespace dlsim
