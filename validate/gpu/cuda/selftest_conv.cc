#include "validate/gpu/cuda/selftest_conv.h"

#include <cstring>
#include <memory>
#include <random>

#include "validate/gpu/cuda/cuda_check.h"
#include "validate/gpu/cuda/op_runner.h"
#include "validate/gpu/op_translation.h"
#include "workloads/model_builder.h"
#include "workloads/training.h"

namespace dlsim::cuda {

namespace {

// Host images of the three element types. The values written are exact in each (see selftest_conv.h), so the
// float -> 16-bit conversions need no rounding.
uint16_t to_half(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  if (f == 0.f) return static_cast<uint16_t>((b >> 16) & 0x8000u);
  const uint32_t exp = ((b >> 23) & 0xffu) - 127u + 15u;
  return static_cast<uint16_t>(((b >> 16) & 0x8000u) | (exp << 10) | ((b >> 13) & 0x3ffu));
}
float from_half(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  uint32_t b;
  if (exp == 0x1f) b = sign | 0x7f800000u | (mant << 13);  // inf, NaN
  else if (exp != 0) b = sign | ((exp - 15u + 127u) << 23) | (mant << 13);
  else {
    float v = static_cast<float>(mant) / 16777216.f;  // subnormal: mant * 2^-24
    return sign ? -v : v;
  }
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

struct HostTensor {
  DType dtype;
  std::vector<float> v;  // the values, in memory order
  std::vector<char> bytes() const {
    const size_t es = dtype_bytes(dtype);
    std::vector<char> out(v.size() * es);
    for (size_t i = 0; i < v.size(); ++i) {
      if (dtype == DType::F32) std::memcpy(&out[i * 4], &v[i], 4);
      else {
        uint32_t b;
        std::memcpy(&b, &v[i], 4);
        const uint16_t h = dtype == DType::BF16 ? static_cast<uint16_t>(b >> 16) : to_half(v[i]);
        std::memcpy(&out[i * 2], &h, 2);
      }
    }
    return out;
  }
  static std::vector<float> read(DType t, const std::vector<char>& raw) {
    const size_t es = dtype_bytes(t);
    std::vector<float> out(raw.size() / es);
    for (size_t i = 0; i < out.size(); ++i) {
      if (t == DType::F32) std::memcpy(&out[i], &raw[i * 4], 4);
      else {
        uint16_t h;
        std::memcpy(&h, &raw[i * 2], 2);
        if (t == DType::F16) out[i] = from_half(h);
        else {
          const uint32_t b = static_cast<uint32_t>(h) << 16;
          std::memcpy(&out[i], &b, 4);
        }
      }
    }
    return out;
  }
};

struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(size_t bytes) { DLSIM_CK(cudaMalloc(&p, std::max<size_t>(bytes, 256)), "selftest conv"); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

// Element offsets in memory, written out apart from the code under test: NCHW or NHWC activations, KCRS or
// KRSC filters.
struct Layout {
  const ConvShape& c;
  int64_t cg() const { return c.c / c.groups; }
  int64_t x(int64_t n, int64_t ch, int64_t h, int64_t w) const {
    return c.channels_last ? ((n * c.h + h) * c.w + w) * c.c + ch : ((n * c.c + ch) * c.h + h) * c.w + w;
  }
  int64_t y(int64_t n, int64_t k, int64_t p, int64_t q) const {
    return c.channels_last ? ((n * c.p + p) * c.q + q) * c.k + k : ((n * c.k + k) * c.p + p) * c.q + q;
  }
  int64_t w(int64_t k, int64_t ch, int64_t r, int64_t s) const {
    return c.channels_last ? ((k * c.r + r) * c.s + s) * cg() + ch : ((k * cg() + ch) * c.r + r) * c.s + s;
  }
};

// The pass's output from its inputs, in float64: y from x and w, dx from dy and w, dw from x and dy.
std::vector<double> reference(KernelCall call, const ConvShape& c, const std::vector<float>& x, const std::vector<float>& w,
                              const std::vector<float>& y, size_t out_size) {
  const Layout L{c};
  std::vector<double> out(out_size, 0.0);
  const int64_t kg = c.k / c.groups;
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t k = 0; k < c.k; ++k)
      for (int64_t p = 0; p < c.p; ++p)
        for (int64_t q = 0; q < c.q; ++q)
          for (int64_t ch = 0; ch < L.cg(); ++ch)
            for (int64_t r = 0; r < c.r; ++r)
              for (int64_t s = 0; s < c.s; ++s) {
                const int64_t ih = p * c.stride_h - c.pad_h + r * c.dil_h, iw = q * c.stride_w - c.pad_w + s * c.dil_w;
                if (ih < 0 || ih >= c.h || iw < 0 || iw >= c.w) continue;
                const auto xi = static_cast<size_t>(L.x(n, (k / kg) * L.cg() + ch, ih, iw));
                const auto wi = static_cast<size_t>(L.w(k, ch, r, s)), yi = static_cast<size_t>(L.y(n, k, p, q));
                if (call == KernelCall::ConvForward) out[yi] += static_cast<double>(x[xi]) * w[wi];
                else if (call == KernelCall::ConvBackwardData) out[xi] += static_cast<double>(y[yi]) * w[wi];
                else out[wi] += static_cast<double>(x[xi]) * y[yi];
              }
  return out;
}

struct Case {
  std::string name;
  TrainingOptions opts;
  int64_t n, c, hw, k, kernel, stride, pad, groups;
  double tol;
};

// stem (1x1, so that "conv" has a backward-data op) -> relu -> conv -> pool -> fc -> loss.
Graph case_graph(const Case& cs) {
  ModelBuilder b("selftest-conv", cs.n, build_options(cs.opts));
  TensorId x = b.input({cs.n, cs.c, cs.hw, cs.hw}, DType::F32);
  x = b.relu(b.conv2d(x, cs.c, 1, 1, 0, 1, false, "stem"));
  x = b.conv2d(x, cs.k, cs.kernel, cs.stride, cs.pad, cs.groups, false, "conv");
  b.cross_entropy_loss(b.linear(b.flatten(b.adaptive_avg_pool(x, 1, 1, "pool")), 10, true, "fc"));
  return make_training_graph(b.finish(), cs.opts);
}

const Op& conv_case_op(const Graph& g, const std::string& name) {
  for (const Op& o : g.ops())
    if (o.name == name) return o;
  throw CudaError("selftest: no op named " + name);
}

}  // namespace

void run_conv_selftest(const ConvCaseReport& report) {
  std::vector<Case> cases;
  auto add = [&](std::string name, Precision p, MemoryFormat f, Tf32 t, std::array<int64_t, 8> s, double tol) {
    Case cs{std::move(name), {}, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], tol};
    cs.opts.precision = p, cs.opts.memory_format = f, cs.opts.tf32 = t;
    cases.push_back(cs);
  };
  // Tolerances: fp32 (TF32 on or off: exact inputs) only Winograd/FFT rounding; fp16 and bf16 the output's
  // rounding (2^-11, 2^-8) with room for the sum of squares.
  add("fp32 nchw no-tf32 3x3", Precision::FP32, MemoryFormat::NCHW, Tf32::Off, {2, 16, 12, 24, 3, 1, 1, 1}, 1e-4);
  add("fp32 nchw tf32 3x3/2 g2", Precision::FP32, MemoryFormat::NCHW, Tf32::Conv, {2, 16, 13, 32, 3, 2, 1, 2}, 1e-4);
  add("fp16 nhwc 3x3", Precision::MixedFP16, MemoryFormat::NHWC, Tf32::Conv, {2, 16, 12, 24, 3, 1, 1, 1}, 1e-3);
  add("bf16 nhwc 1x1/2", Precision::MixedBF16, MemoryFormat::NHWC, Tf32::Conv, {2, 32, 12, 64, 1, 2, 0, 1}, 8e-3);
  cudnnHandle_t dnn = nullptr;
  DLSIM_CK(cudnnCreate(&dnn), "selftest conv");
  std::mt19937_64 rng(20261128);
  std::uniform_int_distribution<int> k16(-8, 7);
  for (const Case& cs : cases) {
    const Graph g = case_graph(cs);
    for (const char* op_name : {"conv", "conv.bwd_data", "conv.bwd_filter"}) {
      const OpTranslation tr = translate_op(g, conv_case_op(g, op_name));
      const KernelStep& st = tr.steps.at(0);
      // The step's operands: inputs random (the same for both APIs), outputs poisoned with NaN (0xff bytes).
      std::vector<HostTensor> ins;
      for (const Arg& a : st.args.in) {
        HostTensor h{a.dtype, std::vector<float>(a.bytes / dtype_bytes(a.dtype))};
        for (float& v : h.v) v = static_cast<float>(k16(rng)) / 16.f;
        ins.push_back(std::move(h));
      }
      const Arg& o = st.args.out.at(0);
      std::vector<float> none;
      const std::vector<float>& xv = st.call == KernelCall::ConvBackwardData ? none : ins[0].v;
      const std::vector<float>& wv = st.call == KernelCall::ConvBackwardFilter ? none : ins[1].v;
      const std::vector<float>& yv = st.call == KernelCall::ConvForward ? none
                                     : st.call == KernelCall::ConvBackwardData ? ins[0].v : ins[1].v;
      const std::vector<double> ref = reference(st.call, tr.conv, xv, wv, yv, o.bytes / dtype_bytes(o.dtype));
      for (bool graph_api : {false, true}) {
        std::unique_ptr<GraphConvCache> cache;
        if (graph_api) cache = std::make_unique<GraphConvCache>(cudnn_backend(), dnn);
        OpRunner runner(g, tr, dnn, nullptr, cache.get());
        runner.prepare(UINT64_MAX);
        std::vector<std::unique_ptr<DevBuf>> in_bufs;
        for (const HostTensor& h : ins) {
          const std::vector<char> b = h.bytes();
          in_bufs.push_back(std::make_unique<DevBuf>(b.size()));
          DLSIM_CK(cudaMemcpy(in_bufs.back()->p, b.data(), b.size(), cudaMemcpyHostToDevice), "selftest conv");
        }
        DevBuf out(o.bytes), ws(runner.workspace_bytes());
        DLSIM_CK(cudaMemset(out.p, 0xff, o.bytes), "selftest conv");
        runner.launch(nullptr, [&](size_t, bool is_out, size_t slot) { return is_out ? out.p : in_bufs.at(slot)->p; },
                      ws.p);
        DLSIM_CK(cudaDeviceSynchronize(), "selftest conv " + std::string(op_name));
        std::vector<char> raw(o.bytes);
        DLSIM_CK(cudaMemcpy(raw.data(), out.p, o.bytes, cudaMemcpyDeviceToHost), "selftest conv");
        report(std::string(graph_api ? "graph " : "legacy ") + cs.name + " " + to_string(st.call) + " [" +
                   runner.algorithm() + "]",
               HostTensor::read(o.dtype, raw), ref, cs.tol);
      }
    }
  }
  cudnnDestroy(dnn);
}

}  // namespace dlsim::cuda
