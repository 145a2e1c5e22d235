#include "validate/calibrate/kernel_fit/fit_samples.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "hw/fitted/conv_backend.h"

namespace dlsim {
namespace {

MathPath sweep_path(const SweepRecord& r) {
  if (r.dtype == "float16" || r.dtype == "fp16") return MathPath::Fp16;
  if (r.dtype == "bfloat16" || r.dtype == "bf16") return MathPath::Bf16;
  if (r.dtype == "tf32") return MathPath::Tf32;
  if (r.dtype == "float32" && is_conv(r.op) && r.tf32) return MathPath::Tf32;  // PyTorch's default for convolutions
  // fp32 attention: the memory-efficient kernel's 3xTF32 (sdpa_path); the sweeps and traces are of sm80+ GPUs.
  if (r.dtype == "float32" && (r.op == SweepOp::SdpaFwd || r.op == SweepOp::SdpaFwdBwd))
    return sdpa_path(MathPath::CudaCore, DType::F32, true);
  return MathPath::CudaCore;
}

DType sweep_dtype(const SweepRecord& r) {
  if (r.dtype == "float16" || r.dtype == "fp16") return DType::F16;
  if (r.dtype == "bfloat16" || r.dtype == "bf16") return DType::BF16;
  return DType::F32;
}

KernelFamily memory_family(SweepOp op) {
  switch (op) {
    case SweepOp::Softmax: return KernelFamily::Reduction;
    case SweepOp::LayerNorm: return KernelFamily::LayerNorm;
    case SweepOp::BatchNormFwd: return KernelFamily::BatchNorm;
    default: return KernelFamily::Elementwise;
  }
}

// The zoo model of a record's src: "model:<name>", where later sweeps add the pass (":wgrad") or the batch the layer
// was recorded at ("-b64"); neither is another model, so leaving one model out leaves out all of its layers.
std::string sweep_model_of(const std::string& src) {
  if (src.rfind("model:", 0) != 0) return "";
  std::string m = src.substr(6, src.find(':', 6) == std::string::npos ? std::string::npos : src.find(':', 6) - 6);
  const size_t b = m.rfind("-b");
  if (b != std::string::npos && b + 2 < m.size() &&
      m.find_first_not_of("0123456789", b + 2) == std::string::npos)
    m.erase(b);
  return m;
}

std::string sweep_sizes_key(const SweepRecord& r) {
  nlohmann::json j = sweep_record_to_json(r);
  j.erase("us");
  j.erase("us_min");
  j.erase("src");
  j.erase("op");
  return j.dump();
}

FitSample fit_sample_of(const SweepRecord& r, double us) {
  FitSample s;
  s.shape = sweep_record_shape(r);
  s.cls = class_candidates(s.shape).front();
  s.us = us;
  s.shape_key = s.cls + " " + sweep_sizes_key(r);
  s.model = sweep_model_of(r.src);
  s.record = s.paired_record = r.index;
  return s;
}

// A convolution cuDNN runs with layout transposes around it (an fp32 NCHW grouped one): its measured time is the
// kernel's and the transposes', and the simulator prices each of them (op_kernel_shapes.h), so a sample of the whole
// would count the transposes twice.
bool has_layout_transposes(const SweepRecord& r) {
  const KernelFamily pass = r.op == SweepOp::ConvFwd     ? KernelFamily::ConvFwd
                            : r.op == SweepOp::ConvDgrad ? KernelFamily::ConvDgrad
                            : r.op == SweepOp::ConvWgrad ? KernelFamily::ConvWgrad
                                                         : KernelFamily::Gemm;
  if (pass == KernelFamily::Gemm) return false;
  return !conv_layout_transposes(pass, r.conv, sweep_path(r), dtype_bytes(sweep_dtype(r))).empty();
}

}  // namespace

KernelShape sweep_record_shape(const SweepRecord& r) {
  const MathPath path = sweep_path(r);
  const uint32_t eb = dtype_bytes(sweep_dtype(r));
  switch (r.op) {
    case SweepOp::ConvFwd: return conv_kernel_shape(KernelFamily::ConvFwd, r.conv, path, eb);
    case SweepOp::ConvDgrad: return conv_kernel_shape(KernelFamily::ConvDgrad, r.conv, path, eb);
    case SweepOp::ConvWgrad: return conv_kernel_shape(KernelFamily::ConvWgrad, r.conv, path, eb);
    case SweepOp::Gemm:
    case SweepOp::Bmm:
      return gemm_kernel_shape(static_cast<double>(r.op == SweepOp::Bmm ? r.batch : 1), static_cast<double>(r.m),
                               static_cast<double>(r.n), static_cast<double>(r.k), path, eb);
    case SweepOp::SdpaFwd:
    case SweepOp::SdpaFwdBwd:
      return sdpa_kernel_shape(r.op == SweepOp::SdpaFwdBwd, static_cast<double>(r.b), static_cast<double>(r.heads),
                               static_cast<double>(r.seq), static_cast<double>(r.d), r.causal, path, eb);
    default: break;
  }
  KernelShape s;
  s.family = memory_family(r.op);
  s.dtype = sweep_dtype(r);
  s.bytes = static_cast<double>(r.bytes);
  if (r.op == SweepOp::BatchNormFwd) s.channels = static_cast<double>(r.channels);
  // kernel_sweep.py normalises rows of 1,024 (sample_graph.cc builds the same op).
  if (r.op == SweepOp::LayerNorm) s.rows = std::max(1.0, std::floor(static_cast<double>(r.numel) / 1024.0));
  return s;
}

std::vector<FitSample> fit_samples(const KernelSweep& sweep, std::vector<std::string>& notes) {
  std::vector<FitSample> out;
  // Forward flash-attention records by shape, in file order: the i-th forward+backward of a shape pairs with the
  // i-th forward of it (else its first).
  using SdpaKey = std::tuple<int64_t, int64_t, int64_t, int64_t, bool, std::string>;
  std::map<SdpaKey, std::vector<const SweepRecord*>> forwards;
  std::map<SdpaKey, size_t> used;
  for (const SweepRecord& r : sweep.records)
    if (r.op == SweepOp::SdpaFwd) forwards[{r.b, r.heads, r.seq, r.d, r.causal, r.dtype}].push_back(&r);
  size_t transposed = 0;
  for (const SweepRecord& r : sweep.records) {
    if (has_layout_transposes(r)) {
      ++transposed;
      continue;
    }
    if (r.op != SweepOp::SdpaFwdBwd) {
      out.push_back(fit_sample_of(r, r.us));
      continue;
    }
    const SdpaKey key{r.b, r.heads, r.seq, r.d, r.causal, r.dtype};
    const std::string where = sweep.file + ": records[" + std::to_string(r.index) + "] (sdpa_fwd_bwd)";
    auto it = forwards.find(key);
    if (it == forwards.end()) {
      notes.push_back(where + ": no sdpa_fwd record of its shape to take the forward from; left out");
      continue;
    }
    const size_t i = used[key]++;
    const SweepRecord& f = *it->second[i < it->second.size() ? i : 0];
    if (!(r.us > f.us)) {
      notes.push_back(where + ": not slower than its forward (records[" + std::to_string(f.index) + "]); left out");
      continue;
    }
    FitSample s = fit_sample_of(r, r.us - f.us);
    s.paired_record = f.index;
    out.push_back(std::move(s));
  }
  if (transposed > 0)
    notes.push_back(sweep.file + ": " + std::to_string(transposed) +
                    " fp32 NCHW grouped convolution records left out: their time holds the layout transposes cuDNN "
                    "runs around the kernel, which the simulator prices as kernels of their own (hw/fitted/"
                    "conv_backend.h)");
  return out;
}

}  // namespace dlsim
