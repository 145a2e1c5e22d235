#include "validate/calibrate/kernel_fit/sample_graph.h"

namespace dlsim {
namespace {

DType sample_dtype(const SweepRecord& r) {
  if (r.dtype == "float16" || r.dtype == "fp16") return DType::F16;
  if (r.dtype == "bfloat16" || r.dtype == "bf16") return DType::BF16;
  return DType::F32;
}

TensorId sample_tensor(Graph& g, const std::string& name, DType t, std::vector<int64_t> shape,
                       TensorKind kind = TensorKind::Activation) {
  Tensor x;
  x.name = name;
  x.kind = kind;
  x.dtype = t;
  x.shape = std::move(shape);
  x.bytes = static_cast<uint64_t>(numel(x.shape)) * dtype_bytes(t);
  return g.add_tensor(std::move(x));
}

uint64_t sample_bytes_of(const Graph& g, const std::vector<TensorId>& ids) {
  uint64_t b = 0;
  for (TensorId id : ids) b += g.tensor(id).bytes;
  return b;
}

OpId sample_op(Graph& g, OpKind kind, const std::vector<TensorId>& in, const std::vector<TensorId>& out, double flops,
               const std::vector<std::pair<Attr, int64_t>>& attrs, OpId forward = -1) {
  Op o;
  o.name = "sweep";
  o.kind = kind;
  o.inputs = in;
  o.outputs = out;
  o.flops = flops;
  o.bytes_read = sample_bytes_of(g, in);
  o.bytes_written = sample_bytes_of(g, out);
  o.forward_op = forward;
  for (const auto& [a, v] : attrs) o.set_attr(a, v);
  return g.add_op(std::move(o));
}

void conv_graph(Graph& g, const SweepRecord& r) {
  const ConvSizes& z = r.conv;
  const DType t = sample_dtype(r);
  // The memory-format pass's shapes (workloads/memory_format.h): channels_last keeps the logical NCHW shape; a
  // 16-bit NCHW convolution reads and writes NHWC-shaped transposes.
  const bool channels_last = r.layout == "nhwc";
  const bool nhwc_shaped = t != DType::F32 && !channels_last;
  auto image = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    return nhwc_shaped ? std::vector<int64_t>{n, h, w, c} : std::vector<int64_t>{n, c, h, w};
  };
  const TensorId x = sample_tensor(g, "x", t, image(z.n, z.c, z.h, z.w));
  const TensorId w = sample_tensor(g, "w", t, {z.k, z.c / z.groups, z.r, z.s}, TensorKind::Weight);
  const TensorId y = sample_tensor(g, "y", t, image(z.n, z.k, z.out_h(), z.out_w()));
  const double macs = static_cast<double>(z.n * z.k * z.out_h() * z.out_w()) * static_cast<double>(z.c / z.groups) *
                      static_cast<double>(z.r * z.s);
  const std::vector<std::pair<Attr, int64_t>> attrs = {
      {Attr::kernel_h, z.r},      {Attr::kernel_w, z.s},   {Attr::stride_h, z.stride_h},
      {Attr::stride_w, z.stride_w}, {Attr::pad_h, z.pad_h}, {Attr::pad_w, z.pad_w},
      {Attr::dilation, z.dilation}, {Attr::groups, z.groups}, {Attr::bias, 0},
      {Attr::in_channels, z.c},   {Attr::out_channels, z.k}, {Attr::macs, static_cast<int64_t>(macs)},
      {Attr::tf32, r.dtype == "float32" && r.tf32 ? 1 : 0}, {Attr::channels_last, channels_last ? 1 : 0}};
  if (r.op == SweepOp::ConvFwd) {
    sample_op(g, OpKind::Conv2d, {x, w}, {y}, 2 * macs, attrs);
  } else if (r.op == SweepOp::ConvDgrad) {
    const TensorId gy = sample_tensor(g, "gy", t, g.tensor(y).shape, TensorKind::Gradient);
    const TensorId gx = sample_tensor(g, "gx", t, g.tensor(x).shape, TensorKind::Gradient);
    sample_op(g, OpKind::Conv2dBwdData, {gy, w}, {gx}, 2 * macs, attrs);
  } else {
    const TensorId gy = sample_tensor(g, "gy", t, g.tensor(y).shape, TensorKind::Gradient);
    const TensorId gw = sample_tensor(g, "gw", t, g.tensor(w).shape, TensorKind::Gradient);
    sample_op(g, OpKind::Conv2dBwdFilter, {gy, x}, {gw}, 2 * macs, attrs);
  }
}

void gemm_graph(Graph& g, const SweepRecord& r) {
  const DType t = sample_dtype(r);
  const int64_t b = r.op == SweepOp::Bmm ? r.batch : 1;
  auto dims = [&](int64_t rows, int64_t cols) {
    return b > 1 ? std::vector<int64_t>{b, rows, cols} : std::vector<int64_t>{rows, cols};
  };
  const TensorId a = sample_tensor(g, "a", t, dims(r.m, r.k));
  const TensorId bb = sample_tensor(g, "b", t, dims(r.k, r.n));
  const TensorId c = sample_tensor(g, "c", t, dims(r.m, r.n));
  const double macs = static_cast<double>(b) * static_cast<double>(r.m) * static_cast<double>(r.n) *
                      static_cast<double>(r.k);
  sample_op(g, OpKind::MatMul, {a, bb}, {c}, 2 * macs,
            {{Attr::batch, b}, {Attr::m, r.m}, {Attr::k, r.k}, {Attr::n, r.n}, {Attr::macs, static_cast<int64_t>(macs)},
             {Attr::tf32, r.dtype == "tf32" ? 1 : 0}});
}

void sdpa_graph(Graph& g, const SweepRecord& r) {
  const DType t = sample_dtype(r);
  const std::vector<int64_t> qkv = {r.b, r.heads, r.seq, r.d};
  const TensorId q = sample_tensor(g, "q", t, qkv), k = sample_tensor(g, "k", t, qkv), v = sample_tensor(g, "v", t, qkv);
  const TensorId o = sample_tensor(g, "o", t, qkv), lse = sample_tensor(g, "lse", DType::F32, {r.b, r.heads, r.seq});
  const double s = static_cast<double>(r.seq);
  const double macs = static_cast<double>(r.b * r.heads) * s * s * static_cast<double>(r.d) * (r.causal ? 1.0 : 2.0);
  const std::vector<std::pair<Attr, int64_t>> attrs = {{Attr::batch, r.b},      {Attr::heads, r.heads},
                                                       {Attr::seq, r.seq},      {Attr::head_dim, r.d},
                                                       {Attr::causal, r.causal}, {Attr::macs, static_cast<int64_t>(macs)}};
  const OpId fwd = sample_op(g, OpKind::FlashAttention, {q, k, v}, {o, lse}, 2 * macs, attrs);
  if (r.op == SweepOp::SdpaFwd) return;
  const TensorId go = sample_tensor(g, "go", t, qkv, TensorKind::Gradient);
  const TensorId gq = sample_tensor(g, "gq", t, qkv, TensorKind::Gradient);
  const TensorId gk = sample_tensor(g, "gk", t, qkv, TensorKind::Gradient);
  const TensorId gv = sample_tensor(g, "gv", t, qkv, TensorKind::Gradient);
  sample_op(g, OpKind::FlashAttentionBwd, {go, q, k, v, o, lse}, {gq, gk, gv}, 2.5 * 2 * macs, attrs, fwd);
}

// The memory-bound ops with the bytes the record states (numel elements, rows of 1,024 for softmax and layer
// norm, N x C x 56 x 56 for batch norm); FLOPs as the synthesis counts them (they never bound these kernels).
void memory_graph(Graph& g, const SweepRecord& r) {
  const DType t = sample_dtype(r);
  const int64_t n = r.numel;
  const std::vector<int64_t> flat = {n};
  Op o;
  o.name = "sweep";
  switch (r.op) {
    case SweepOp::Add: {
      const TensorId a = sample_tensor(g, "a", t, flat), b = sample_tensor(g, "b", t, flat);
      o.kind = OpKind::Add;
      o.inputs = {a, b};
      o.outputs = {sample_tensor(g, "y", t, flat)};
      o.flops = static_cast<double>(n);
      o.set_attr(Attr::inplace, 0);
      break;
    }
    case SweepOp::Relu:
      o.kind = OpKind::Relu;
      o.inputs = {sample_tensor(g, "x", t, flat)};
      o.outputs = {sample_tensor(g, "y", t, flat)};
      o.flops = static_cast<double>(n);
      o.set_attr(Attr::inplace, 0);
      break;
    case SweepOp::Copy:
      o.kind = OpKind::Copy;
      o.inputs = {sample_tensor(g, "x", t, flat)};
      o.outputs = {sample_tensor(g, "y", t, flat)};
      break;
    case SweepOp::Softmax: {
      const std::vector<int64_t> rows = {std::max<int64_t>(1, n / 1024), std::min<int64_t>(n, 1024)};
      o.kind = OpKind::Softmax;
      o.inputs = {sample_tensor(g, "x", t, rows)};
      o.outputs = {sample_tensor(g, "y", t, rows)};
      o.flops = 5.0 * static_cast<double>(n);
      o.set_attr(Attr::axis, 1);
      break;
    }
    case SweepOp::LayerNorm: {
      const int64_t width = std::min<int64_t>(n, 1024), rows = std::max<int64_t>(1, n / 1024);
      o.kind = OpKind::LayerNorm;
      o.inputs = {sample_tensor(g, "x", t, {rows, width}), sample_tensor(g, "gamma", t, {width}, TensorKind::Weight),
                  sample_tensor(g, "beta", t, {width}, TensorKind::Weight)};
      o.outputs = {sample_tensor(g, "y", t, {rows, width}), sample_tensor(g, "mean", DType::F32, {rows}),
                   sample_tensor(g, "rstd", DType::F32, {rows})};
      o.flops = 8.0 * static_cast<double>(n);
      o.set_attr(Attr::normalized, width);
      break;
    }
    default: {  // batchnorm_fwd
      const int64_t c = r.channels, batch = std::max<int64_t>(1, n / (c * 56 * 56));
      o.kind = OpKind::BatchNorm;
      o.inputs = {sample_tensor(g, "x", t, {batch, c, 56, 56}), sample_tensor(g, "gamma", t, {c}, TensorKind::Weight),
                  sample_tensor(g, "beta", t, {c}, TensorKind::Weight)};
      o.outputs = {sample_tensor(g, "y", t, {batch, c, 56, 56}), sample_tensor(g, "mean", DType::F32, {c}),
                   sample_tensor(g, "invstd", DType::F32, {c})};
      o.flops = 8.0 * static_cast<double>(n);
      o.set_attr(Attr::channels, c);
      break;
    }
  }
  // The bytes the sweep says the op moves (its own count of what must be read and written once).
  const uint64_t out = g.tensor(o.outputs[0]).bytes;
  const uint64_t total = static_cast<uint64_t>(r.bytes);
  o.bytes_written = std::min(out, total);
  o.bytes_read = total - o.bytes_written;
  g.add_op(std::move(o));
}

}  // namespace

Graph sample_graph(const SweepRecord& r) {
  Graph g;
  g.name = std::string("sweep-") + to_string(r.op);
  if (is_conv(r.op)) conv_graph(g, r);
  else if (r.op == SweepOp::Gemm || r.op == SweepOp::Bmm) gemm_graph(g, r);
  else if (r.op == SweepOp::SdpaFwd || r.op == SweepOp::SdpaFwdBwd) sdpa_graph(g, r);
  else memory_graph(g, r);
  return g;
}

}  // namespace dlsim
