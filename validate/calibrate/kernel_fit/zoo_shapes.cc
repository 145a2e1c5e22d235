#include "validate/calibrate/kernel_fit/zoo_shapes.h"

#include <set>

#include "hw/fitted/op_kernel_shapes.h"
#include "hw/math_path.h"
#include "workloads/training.h"
#include "workloads/zoo.h"

namespace dlsim {
namespace {

std::string zoo_dtype_name(DType t, bool gemm) {
  if (t == DType::F16) return gemm ? "fp16" : "float16";
  if (t == DType::BF16) return gemm ? "bf16" : "bfloat16";
  return gemm ? "fp32" : "float32";
}

void add_gemm(std::vector<SweepRecord>& out, int64_t batch, int64_t m, int64_t n, int64_t k, DType t) {
  SweepRecord r;
  r.op = batch > 1 ? SweepOp::Bmm : SweepOp::Gemm;
  r.batch = batch;
  r.m = m;
  r.n = n;
  r.k = k;
  r.dtype = zoo_dtype_name(t, true);
  out.push_back(r);
}

// The op's kernels as sweep records (convolutions once, by their forward).
std::vector<SweepRecord> zoo_records_of_op(const Graph& g, const Op& op) {
  std::vector<SweepRecord> out;
  const DType t = compute_dtype(g, op);
  auto a = [&](Attr x) { return op.attr(x); };
  switch (op.kind) {
    case OpKind::Conv2d: {
      const auto z = conv_sizes_of_op(g, op);
      if (!z) break;
      SweepRecord r;
      r.op = SweepOp::ConvFwd;
      r.conv = *z;
      r.dtype = zoo_dtype_name(t, false);
      r.layout = t == DType::F32 && a(Attr::channels_last) == 0 ? "nchw" : "nhwc";
      r.tf32 = t != DType::F32 || a(Attr::tf32) != 0;
      out.push_back(r);
      break;
    }
    case OpKind::Linear: add_gemm(out, 1, a(Attr::rows), a(Attr::out_features), a(Attr::in_features), t); break;
    case OpKind::LinearBwdData: add_gemm(out, 1, a(Attr::rows), a(Attr::in_features), a(Attr::out_features), t); break;
    case OpKind::LinearBwdWeight: add_gemm(out, 1, a(Attr::out_features), a(Attr::in_features), a(Attr::rows), t); break;
    case OpKind::MatMul: add_gemm(out, a(Attr::batch), a(Attr::m), a(Attr::n), a(Attr::k), t); break;
    case OpKind::MatMulBwd:
      add_gemm(out, a(Attr::batch), a(Attr::m), a(Attr::k), a(Attr::n), t);
      add_gemm(out, a(Attr::batch), a(Attr::k), a(Attr::n), a(Attr::m), t);
      break;
    case OpKind::FlashAttention: {
      SweepRecord r;
      r.op = SweepOp::SdpaFwd;
      r.b = a(Attr::batch);
      r.heads = a(Attr::heads);
      r.seq = a(Attr::seq);
      r.d = a(Attr::head_dim);
      r.causal = a(Attr::causal) != 0;
      r.dtype = t == DType::F16 ? "float16" : "bfloat16";
      out.push_back(r);
      break;
    }
    default: break;
  }
  return out;
}

}  // namespace

std::vector<SweepRecord> zoo_kernel_shapes(const std::vector<std::string>& models, const std::vector<int64_t>& batches) {
  std::vector<SweepRecord> out;
  std::set<std::string> seen;
  for (const std::string& name : models)
    for (int64_t batch : batches) {
      ModelOptions mo;
      mo.batch = batch;
      const Graph train = make_training_graph(build_forward_graph(name, mo), mo.training);
      for (const Op& op : train.ops())
        for (SweepRecord r : zoo_records_of_op(train, op)) {
          const std::string key = sweep_record_to_json(r).dump();
          if (!seen.insert(key).second) continue;
          r.src = "model:" + name;
          r.index = out.size();
          out.push_back(r);
        }
    }
  return out;
}

}  // namespace dlsim
