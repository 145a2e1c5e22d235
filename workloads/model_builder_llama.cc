// ModelBuilder's layers of the Llama family (workloads/llama_models.h): RMSNorm and the rotary written out,
// the rotary embedding's tables, repeat_kv for grouped-query attention, SiLU and FlashAttention.
#include "workloads/model_builder.h"

#include "workloads/internal/model_builder_helpers.h"

namespace dlsim {

using namespace workloads_internal;

// LlamaRMSNorm as eager PyTorch runs it, one kernel per operator (the profiled H100 step of Qwen2.5-0.5B,
// results/fidelity/data/h100-2026-11-27c/traces/, runs exactly these per norm): x.to(float32) (no kernel when x is
// fp32, as the residual stream is under autocast), pow(2), mean(-1, keepdim), + eps, rsqrt, x * rstd,
// .to(input dtype) (none for fp32) and weight * that. What autograd keeps, as PyTorch 2.x does (docs/torch-step.md):
// pow's input and the product's operands (the fp32 x and the (rows, 1) rsqrt, which RsqrtBackward0 keeps as its
// result), and the weight's product's operands (the weight and the normalised x in the input's dtype). x^2, the
// mean and mean + eps are freed once read (MeanBackward1 keeps only sizes). The backward is the synthesizer's, op by
// op (training_backward.cc): 13 kernels for an fp32 x, as the trace shows.
TensorId ModelBuilder::rms_norm(TensorId x, const std::string& name) {
  std::string n = auto_name("rmsnorm", name);
  auto s = shape_of(g_, x, n);
  if (s.empty()) fail(g_, n, "RMS norm of a scalar");
  const DType in_dt = g_.tensor(x).dtype;
  TensorId w = parameter({s.back()}, n + ".weight");
  if (opts_.fused) return rms_norm_fused(x, w, n);
  const TensorId x32 = in_dt == DType::F32 ? x : cast(x, DType::F32, n + ".to_fp32");
  const double elems = static_cast<double>(numel(s));
  TensorId sq = new_tensor(g_, n + ".pow.out", TensorKind::Activation, DType::F32, s);
  emit_other(g_, n + ".pow", OtherOp::Pow, {x32}, {sq}, elems, {{Attr::exponent, 2}});
  std::vector<int64_t> rs(s.begin(), s.end() - 1);
  rs.push_back(1);
  TensorId var = new_tensor(g_, n + ".mean.out", TensorKind::Activation, DType::F32, rs);
  emit_other(g_, n + ".mean", OtherOp::Mean, {sq}, {var}, elems);
  TensorId var_eps = scalar_op(g_, OpKind::Add, var, n + ".add_eps");
  TensorId rstd = new_tensor(g_, n + ".rstd", TensorKind::Activation, DType::F32, rs);
  emit_other(g_, n + ".rsqrt", OtherOp::Rsqrt, {var_eps}, {rstd}, static_cast<double>(numel(rs)));
  // the kept tensors by the names the one-op norm gave them (.rstd, .normalized, .out), which tests and plans read
  TensorId normed = new_tensor(g_, n + ".normalized", TensorKind::Activation, DType::F32, s);
  emit(g_, n + ".mul_rstd", OpKind::Mul, {x32, rstd}, {normed}, elems);
  if (in_dt != DType::F32) normed = cast(normed, in_dt, n + ".to_input_dtype");
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, wider(g_.tensor(w).dtype, in_dt), s);
  emit(g_, n, OpKind::Mul, {w, normed}, {y}, elems);  // the weight's product: the norm's name
  return y;
}

// kernels: fused: one RMSNorm kernel (as Apex's or Liger's) reading x and the weight once and writing y, rstd and
// (for a 16-bit x) x in fp32 and the normalised x; it keeps what the written-out form keeps, so that the choice
// of kernels moves time and not memory.
TensorId ModelBuilder::rms_norm_fused(TensorId x, TensorId w, const std::string& n) {
  const auto s = g_.tensor(x).shape;
  const DType in_dt = g_.tensor(x).dtype;
  std::vector<TensorId> outs;
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, wider(in_dt, g_.tensor(w).dtype), s);
  outs.push_back(y);
  if (in_dt != DType::F32) outs.push_back(new_tensor(g_, n + ".x_fp32", TensorKind::Activation, DType::F32, s));
  std::vector<int64_t> rs(s.begin(), s.end() - 1);
  rs.push_back(1);
  outs.push_back(new_tensor(g_, n + ".rstd", TensorKind::Activation, DType::F32, rs));
  outs.push_back(new_tensor(g_, n + ".normalized", TensorKind::Activation, in_dt, s));
  emit(g_, n, OpKind::RmsNorm, {x, w}, outs, 5.0 * static_cast<double>(numel(s)),
       {{Attr::normalized, s.back()}, {Attr::has_x_fp32, in_dt != DType::F32}});
  return y;
}

std::pair<TensorId, TensorId> ModelBuilder::rotary_embedding(TensorId position_ids, int64_t head_dim,
                                                             const std::string& name) {
  std::string n = auto_name("rotary_emb", name);
  auto s = shape_of(g_, position_ids, n);
  if (s.size() != 2) fail(g_, n, "position ids must be (1, S), got " + shape_str(s));
  if (head_dim <= 0 || head_dim % 2 != 0) fail(g_, n, "rotary head size must be even, got " + std::to_string(head_dim));
  std::vector<int64_t> cs = {s[0], s[1], head_dim};
  TensorId cos = new_tensor(g_, n + ".cos", TensorKind::Activation, opts_.weights, cs);
  TensorId sin = new_tensor(g_, n + ".sin", TensorKind::Activation, opts_.weights, cs);
  // inv_freq x positions (a tiny matmul), cat, cos and sin: a few flops per element.
  emit_other(g_, n, OtherOp::RotaryEmbedding, {position_ids}, {cos, sin}, 4.0 * static_cast<double>(numel(cs)),
             {{Attr::head_dim, head_dim}});
  return {cos, sin};
}

// apply_rotary_pos_emb as eager PyTorch runs it on one of q and k (transformers 5's modeling_llama.py and
// modeling_qwen2.py): q * cos + rotate_half(q) * sin, rotate_half(q) = cat((-q[..., d/2:], q[..., :d/2]), -1). The
// slices are views, so five kernels: the product by cos, the neg of half of q, the cat, the product by sin and the
// sum (the profiled H200 Qwen2.5-0.5B step, results/fidelity/data/h200-2026-11-28/traces.tar, runs exactly these per
// q and per k). q is the projection viewed as (B, S, heads, d) and transposed, which the products read through the
// view; the output is (B, heads, S, d). Under autocast cos and sin follow the fp32 hidden states, so the products
// and the sum are fp32, the neg and the cat in q's dtype. What autograd keeps: cos and sin (the MulBackward0s; q
// needs no save, cos and sin no gradient); the rest is freed once read. The backward is the synthesizer's
// (training_backward.cc): 11 kernels per q or k, as the trace shows.
TensorId ModelBuilder::rotary(TensorId x, TensorId cos, TensorId sin, const std::string& name) {
  std::string n = auto_name("rotary", name);
  auto s = shape_of(g_, x, n);
  auto cs = shape_of(g_, cos, n);
  if (s.size() != 4) fail(g_, n, "rotary expects (B, S, heads, d), got " + shape_str(s));
  if (cs.size() != 3 || cs[1] != s[1] || cs[2] != s[3] || shape_of(g_, sin, n) != cs)
    fail(g_, n, "rotary cos/sin " + shape_str(cs) + " do not match the input " + shape_str(s));
  if (opts_.fused) return rotary_fused(x, cos, sin, n);
  const DType xd = g_.tensor(x).dtype, pd = wider(xd, g_.tensor(cos).dtype);
  const std::vector<int64_t> ys = {s[0], s[2], s[1], s[3]}, half = {s[0], s[2], s[1], s[3] / 2};
  const double elems = static_cast<double>(numel(s));
  const TensorId a = new_tensor(g_, n + ".mul_cos.out", TensorKind::Activation, pd, ys);
  emit(g_, n + ".mul_cos", OpKind::Mul, {x, cos}, {a}, elems);
  const TensorId nh = new_tensor(g_, n + ".neg.out", TensorKind::Activation, xd, half);
  const OpId neg = emit_other(g_, n + ".neg", OtherOp::NegHalf, {x}, {nh}, elems / 2);
  g_.op(neg).bytes_read = g_.tensor(nh).bytes;  // x[..., d/2:]
  const TensorId r = new_tensor(g_, n + ".cat.out", TensorKind::Activation, xd, ys);
  const OpId cat = emit_other(g_, n + ".cat", OtherOp::CatHalves, {nh, x}, {r}, 0);
  g_.op(cat).bytes_read = 2 * g_.tensor(nh).bytes;  // -x2 and x[..., :d/2]
  const TensorId b = new_tensor(g_, n + ".mul_sin.out", TensorKind::Activation, pd, ys);
  emit(g_, n + ".mul_sin", OpKind::Mul, {r, sin}, {b}, elems);
  const TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, pd, ys);
  emit(g_, n, OpKind::Add, {a, b}, {y}, elems, {{Attr::inplace, 0}});  // the sum: the rotary's name
  return y;
}

// kernels: fused: one rotary kernel (as Liger's or flash-attn's) keeping cos and sin, as the written-out form
// does. Its bytes are the five kernels' (three more reads and two more writes of the output's size than its own
// input and output), as before the rotary was written out.
TensorId ModelBuilder::rotary_fused(TensorId x, TensorId cos, TensorId sin, const std::string& n) {
  const auto s = g_.tensor(x).shape;
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, wider(g_.tensor(x).dtype, g_.tensor(cos).dtype),
                          {s[0], s[2], s[1], s[3]});
  const double elems = static_cast<double>(numel(s));
  OpId id = emit(g_, n, OpKind::Rotary, {x, cos, sin}, {y}, 4.0 * elems);
  Op& o = g_.op(id);
  o.bytes_read += 3 * g_.tensor(y).bytes;
  o.bytes_written += 2 * g_.tensor(y).bytes;
  return y;
}

TensorId ModelBuilder::repeat_kv(TensorId x, int64_t n_rep, bool seq_major, const std::string& name) {
  std::string n = auto_name("repeat_kv", name);
  auto s = shape_of(g_, x, n);
  if (s.size() != 4 || n_rep <= 0) fail(g_, n, "repeat_kv expects a 4-D input and a positive repeat, got " + shape_str(s));
  const int64_t kv = seq_major ? s[2] : s[1], seq = seq_major ? s[1] : s[2];
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, {s[0], kv * n_rep, seq, s[3]});
  emit(g_, n, OpKind::RepeatKv, {x}, {y}, 0, {{Attr::n_rep, n_rep}, {Attr::seq_major, seq_major}});
  return y;
}

TensorId ModelBuilder::silu(TensorId x, const std::string& name) {
  std::string n = auto_name("silu", name);
  auto s = shape_of(g_, x, n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, s);
  emit(g_, n, OpKind::Silu, {x}, {y}, 5.0 * static_cast<double>(numel(s)));
  return y;
}

// FLOPs (Dao et al., FlashAttention, 2022): Q K^T and P V are 2 x 2 B H S^2 d; causal masking skips the upper
// triangle's blocks, half of it. The backward (training_backward.cc) recomputes P and does four products: 2.5x the forward.
TensorId ModelBuilder::flash_attention(TensorId q, TensorId k, TensorId v, bool causal, const std::string& name) {
  std::string n = auto_name("sdpa", name);
  auto sq = shape_of(g_, q, n), sk = shape_of(g_, k, n), sv = shape_of(g_, v, n);
  if (sq.size() != 4 || sk != sq || sv != sq)
    fail(g_, n, "flash attention needs q, k, v of one (B, heads, S, d) shape, got " + shape_str(sq) + ", " +
                    shape_str(sk) + ", " + shape_str(sv));
  // Under autocast scaled_dot_product_attention runs in the 16-bit type (it is on autocast's lower-precision list).
  const DType dt = autocast() ? act_dtype_ : g_.tensor(q).dtype;
  TensorId cq = cast(q, dt, n), ck = cast(k, dt, n), cv = cast(v, dt, n);
  TensorId o = new_tensor(g_, n + ".out", TensorKind::Activation, dt, {sq[0], sq[2], sq[1], sq[3]});
  TensorId lse = new_tensor(g_, n + ".logsumexp", TensorKind::Activation, DType::F32, {sq[0], sq[1], sq[2]});
  const int64_t macs = checked_macs(g_, n, {2, sq[0], sq[1], sq[2], sq[2], sq[3]});
  const double flops = 2.0 * static_cast<double>(macs) * (causal ? 0.5 : 1.0);
  // macs: those performed (the causal kernel skips the masked half)
  emit(g_, n, OpKind::FlashAttention, {cq, ck, cv}, {o, lse}, flops,
       {{Attr::batch, sq[0]}, {Attr::heads, sq[1]}, {Attr::seq, sq[2]}, {Attr::head_dim, sq[3]}, {Attr::causal, causal},
        {Attr::macs, static_cast<int64_t>(flops / 2)}});
  return o;
}

}  // namespace dlsim
