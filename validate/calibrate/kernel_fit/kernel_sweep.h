#pragma once
// A kernel sweep: measured times of single library kernels on one GPU, the file validate/torch/kernel_sweep.py
// writes and `dlsim fit-kernels` reads (the format of shared/data/gpu/*/kernels.json):
//   {"meta": {...}, "records": [{"op": "conv_fwd", "n": 32, ..., "dtype": "float32", "us": 41.2}, ...], "seconds": 55}
// (meta: free-form, the device and library versions; seconds, optional: how long the sweep took).
// Each record is one op timed alone: `us` its median time, `us_min` (optional) the least. The fields by op:
//   conv_fwd, conv_dgrad, conv_wgrad  n c h w k r s stride pad groups (integers; stride_w, pad_w, dilation
//                     optional), dtype float32 | float16 | bfloat16, layout nchw | nhwc (optional), tf32 (optional
//                     boolean, float32 only: whether TF32 was allowed, PyTorch's default true)
//   gemm              m n k, dtype fp32 | tf32 | bf16 | fp16   (C[m,n] = A[m,k] B[k,n])
//   bmm               batch m n k, the same dtypes
//   sdpa_fwd, sdpa_fwd_bwd  b heads seq d, causal (boolean), dtype bfloat16 | float16
//   add relu copy softmax layernorm batchnorm_fwd  numel bytes (batchnorm_fwd also c), dtype float32 | bfloat16 |
//                     float16
// and on any record: src (text: "model:<name>" for a zoo model's layer, "random" for a seeded draw) and flops
// (a number, informational: the fit computes its own). Anything else, a missing or ill-typed field, a
// non-positive size or time, or an unknown op is a ConfigError naming the file, the record's index and the field.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/fitted/op_kernel_shapes.h"

namespace dlsim {

enum class SweepOp : uint8_t {
  ConvFwd, ConvDgrad, ConvWgrad, Gemm, Bmm, SdpaFwd, SdpaFwdBwd, Add, Relu, Copy, Softmax, LayerNorm, BatchNormFwd,
};
const char* to_string(SweepOp op);  // as the file spells it: "conv_fwd", "sdpa_fwd_bwd", "batchnorm_fwd", ...
bool is_conv(SweepOp op);
bool is_memory_bound(SweepOp op);

struct SweepRecord {
  size_t index = 0;  // in the file's records
  SweepOp op = SweepOp::Add;
  std::string dtype;  // as written
  std::string layout; // convolutions: nchw or nhwc (the dtype's default when the record has none)
  bool tf32 = true;   // float32 convolutions: TF32 allowed
  std::string src;    // "" when absent
  ConvSizes conv;
  int64_t batch = 1, m = 0, n = 0, k = 0;            // gemm, bmm
  int64_t b = 0, heads = 0, seq = 0, d = 0;           // sdpa
  bool causal = false;
  int64_t numel = 0, bytes = 0, channels = 0;         // memory-bound ops
  double us = 0;
  double us_min = 0;  // 0 when absent
};

struct KernelSweep {
  std::string file;
  nlohmann::json meta = nlohmann::json::object();
  std::vector<SweepRecord> records;
};

KernelSweep load_kernel_sweep(const std::string& path);
// The same from text already read (`file` names it in errors): the fuzz target's entry point.
KernelSweep kernel_sweep_from_text(const std::string& text, const std::string& file);
// A record as the file writes it (the sweep's own fields; what kernel_sweep_from_text reads back).
nlohmann::json sweep_record_to_json(const SweepRecord& r);

}  // namespace dlsim
