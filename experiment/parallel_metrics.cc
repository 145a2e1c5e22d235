#include "experiment/parallel_metrics.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "workloads/op_kind.h"
#include "workloads/shape.h"

namespace dlsim {

namespace {

// The Llama-family count when the graph has a token embedding (an Embedding op reading a learnable [vocab,
// hidden] table and [batch, seq] ids) and blocks; false otherwise.
bool transformer_count(const Graph& g, int64_t tp, ModelFlops& out) {
  if (g.blocks.empty()) return false;
  for (const Op& o : g.ops()) {
    if (o.phase != Phase::Forward || o.kind != OpKind::Embedding) continue;
    TensorId table = kNoTensor, ids = kNoTensor;
    for (TensorId t : o.inputs) {
      const Tensor& x = g.tensor(t);
      if (x.learnable && x.shape.size() == 2) table = t;
      else if (x.kind == TensorKind::Input && x.shape.size() == 2) ids = t;
    }
    if (table == kNoTensor || ids == kNoTensor) return false;
    double n = 0;
    for (const Tensor& t : g.tensors())
      if (t.learnable) n += static_cast<double>(numel(t.shape));
    const std::vector<int64_t>& e = g.tensor(table).shape;
    n -= static_cast<double>(e[0]) * static_cast<double>(e[1]);
    const double hidden = static_cast<double>(e[1]);
    const double seq = static_cast<double>(g.tensor(ids).shape[1]);
    const double batch = static_cast<double>(g.tensor(ids).shape[0]);
    const double layers = static_cast<double>(g.blocks.size());
    // n is this tp rank's share of the parameters (replicated norms apart); the attention's 12 L H S per token is
    // split over the tp group's heads
    out.per_iteration = (6 * n + 12 * layers * hidden * seq / static_cast<double>(tp)) * seq * batch;
    out.count = "6N+12LHS";
    out.tokens_per_sample = g.tensor(ids).shape[1];
    return true;
  }
  return false;
}

// Sorted, merged intervals.
std::vector<std::pair<TimeNs, TimeNs>> merged(std::vector<std::pair<TimeNs, TimeNs>> v) {
  std::sort(v.begin(), v.end());
  std::vector<std::pair<TimeNs, TimeNs>> out;
  for (const auto& x : v) {
    if (x.second <= x.first) continue;
    if (!out.empty() && x.first <= out.back().second) out.back().second = std::max(out.back().second, x.second);
    else out.push_back(x);
  }
  return out;
}

}  // namespace

ModelFlops model_flops(const Graph& training, int64_t tp) {
  ModelFlops f;
  f.tp = std::max<int64_t>(1, tp);
  if (transformer_count(training, f.tp, f)) return f;
  f.count = "graph";
  for (const Op& o : training.ops())
    if (o.phase != Phase::Optimizer && !is_collective(o.kind)) f.per_iteration += o.flops;
  return f;
}

CommunicationTime communication_time(const Graph& g, const Trace& trace, int iteration) {
  std::vector<std::pair<TimeNs, TimeNs>> comm, compute;
  for (const OpRecord& r : trace.ops) {
    const bool collective = is_collective(g.op(r.op).kind);
    if (collective && r.iteration == iteration) comm.emplace_back(r.start, r.end);
    else if (!collective) compute.emplace_back(r.start, r.end);
  }
  const auto c = merged(std::move(comm));
  const auto k = merged(std::move(compute));
  CommunicationTime out;
  size_t j = 0;
  for (const auto& [s, e] : c) {
    out.collective_ns += e - s;
    TimeNs hidden = 0;
    while (j < k.size() && k[j].second <= s) ++j;  // compute intervals wholly before this one
    for (size_t i = j; i < k.size() && k[i].first < e; ++i)
      hidden += std::min(e, k[i].second) - std::max(s, k[i].first);
    out.exposed_ns += (e - s) - hidden;
  }
  return out;
}

double dense_peak_flops(const GpuSpec& spec, Precision precision, Tf32 tf32) {
  switch (precision) {
    case Precision::MixedFP16: return spec.peak_fp16;
    case Precision::MixedBF16:
    case Precision::BF16: return spec.peak_bf16;
    case Precision::FP32: break;
  }
  return tf32 == Tf32::All && spec.peak_tf32 > 0 ? spec.peak_tf32 : spec.peak_fp32;
}

nlohmann::json parallel_metrics_json(const ModelFlops& flops, const CommunicationTime& comm, double peak_flops,
                                     int64_t batch, TimeNs iteration_ns) {
  nlohmann::json j;
  j["communication_time_us"] = static_cast<double>(comm.collective_ns) / 1000.0;
  j["exposed_communication_time_us"] = static_cast<double>(comm.exposed_ns) / 1000.0;
  if (iteration_ns <= 0) return j;
  const double seconds = static_cast<double>(iteration_ns) * 1e-9;
  const double gpus = static_cast<double>(std::max<int64_t>(1, flops.tp));  // a tp group shares its samples
  if (flops.tokens_per_sample > 0)
    j["tokens_per_s_per_gpu"] = static_cast<double>(batch * flops.tokens_per_sample) / seconds / gpus;
  else
    j["images_per_s_per_gpu"] = static_cast<double>(batch) / seconds / gpus;
  j["model_flops_per_iteration"] = flops.per_iteration;
  j["mfu_flop_count"] = flops.count;
  if (peak_flops > 0) j["mfu"] = flops.per_iteration / (seconds * peak_flops);
  return j;
}

}  // namespace dlsim
