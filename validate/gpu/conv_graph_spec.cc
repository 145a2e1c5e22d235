#include "validate/gpu/conv_graph_spec.h"

#include <sstream>
#include <stdexcept>

namespace dlsim {

const char* to_string(ConvPass p) {
  switch (p) {
    case ConvPass::Forward: return "fwd";
    case ConvPass::BackwardData: return "bwd_data";
    case ConvPass::BackwardFilter: return "bwd_filter";
  }
  return "?";
}

std::array<int64_t, 4> dense_strides(const std::array<int64_t, 4>& d, bool channels_last) {
  // NCHW: W innermost, then H, C, N. NHWC: C innermost, then W, H, N (PyTorch's channels_last strides, which
  // keep this formula for size-one dimensions too).
  if (channels_last) return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
  return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
}

std::array<ConvOperand, 3> conv_operands(ConvPass p) {
  // The translation's operands (op_translation_cudnn.cc): forward in [x, w] out [y]; backward-data in [dy, w]
  // out [dx]; backward-filter in [x, dy] out [dw].
  switch (p) {
    case ConvPass::Forward: return {{{false, 0}, {false, 1}, {true, 0}}};
    case ConvPass::BackwardData: return {{{true, 0}, {false, 1}, {false, 0}}};
    case ConvPass::BackwardFilter: return {{{false, 0}, {true, 0}, {false, 1}}};
  }
  return {};
}

ConvGraphSpec conv_graph_spec(const OpTranslation& t, size_t step) {
  if (!t.needs_workspace || step >= t.steps.size())
    throw std::invalid_argument("conv_graph_spec: op " + std::to_string(t.op) + " has no convolution at step " +
                                std::to_string(step));
  ConvGraphSpec s;
  const KernelStep& st = t.steps[step];
  switch (st.call) {
    case KernelCall::ConvForward: s.pass = ConvPass::Forward; break;
    case KernelCall::ConvBackwardData: s.pass = ConvPass::BackwardData; break;
    case KernelCall::ConvBackwardFilter: s.pass = ConvPass::BackwardFilter; break;
    default:
      throw std::invalid_argument(std::string("conv_graph_spec: step ") + std::to_string(step) + " of op " +
                                  std::to_string(t.op) + " is " + to_string(st.call) + ", not a convolution");
  }
  const ConvShape& c = t.conv;
  auto tensor = [&](int64_t uid, std::array<int64_t, 4> dims) {
    ConvTensorSpec ts;
    ts.uid = uid;
    ts.dims = dims;
    ts.strides = dense_strides(dims, c.channels_last);
    ts.dtype = t.dtype;
    return ts;
  };
  s.x = tensor(kConvUidX, {c.n, c.c, c.h, c.w});
  s.w = tensor(kConvUidW, {c.k, c.c / c.groups, c.r, c.s});
  s.y = tensor(kConvUidY, {c.n, c.k, c.p, c.q});
  s.compute = DType::F32;
  s.pre_pad = s.post_pad = {c.pad_h, c.pad_w};
  s.stride = {c.stride_h, c.stride_w};
  s.dilation = {c.dil_h, c.dil_w};
  s.allow_tensor_cores = t.dtype != DType::F32 || c.tf32;
  s.alpha = static_cast<float>(st.alpha);
  s.beta = static_cast<float>(st.beta);
  return s;
}

std::string ConvGraphSpec::key() const {
  std::ostringstream o;
  auto arr = [&](const auto& a) {
    o << '[';
    for (size_t i = 0; i < a.size(); ++i) o << (i ? "," : "") << a[i];
    o << ']';
  };
  o << to_string(pass);
  for (const ConvTensorSpec* t : {&x, &w, &y}) {
    o << ' ' << static_cast<char>(t->uid) << ':' << to_string(t->dtype);
    arr(t->dims);
    o << '/';
    arr(t->strides);
    o << '@' << t->alignment;
  }
  o << " compute=" << to_string(compute) << " pad=";
  arr(pre_pad);
  o << '+';
  arr(post_pad);
  o << " stride=";
  arr(stride);
  o << " dil=";
  arr(dilation);
  o << (allow_tensor_cores ? "" : " no-tensor-cores") << " alpha=" << alpha << " beta=" << beta;
  return o.str();
}

}  // namespace dlsim
