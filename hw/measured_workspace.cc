#include "hw/measured_workspace.h"

#include <cstdlib>

#include "hw/batch_signature.h"
#include "hw/op_signature.h"

namespace dlsim {

namespace {
constexpr uint64_t kAlign = 256;  // what cudaMalloc guarantees; a workspace is a buffer like any other
uint64_t round_up(double b) {
  const auto v = static_cast<uint64_t>(b + 0.999999);
  return (v + kAlign - 1) / kAlign * kAlign;
}
}  // namespace

WorkspaceCoverage apply_measured_workspaces(Graph& g, const GpuSpec& spec) {
  WorkspaceCoverage c;
  if (spec.conv_workspace.empty() && spec.conv_workspace_by_batch.empty()) {
    for (const Op& op : g.ops()) c.ops += op.workspace != kNoTensor;
    return c;
  }
  for (const Op& op : g.ops()) {
    if (op.workspace == kNoTensor) continue;
    ++c.ops;
    if (auto it = spec.conv_workspace.find(op_signature(g, op)); it != spec.conv_workspace.end()) {
      g.tensor(op.workspace).bytes = it->second;
      ++c.exact;
      continue;
    }
    auto key = batch_free_signature(g, op);
    if (!key) continue;
    auto it = spec.conv_workspace_by_batch.find(key->key);
    if (it == spec.conv_workspace_by_batch.end() || it->second.empty()) continue;
    const std::pair<int64_t, uint64_t>* best = nullptr;
    for (const auto& e : it->second)
      if (!best || std::llabs(e.first - key->batch) <= std::llabs(best->first - key->batch)) best = &e;
    g.tensor(op.workspace).bytes =
        round_up(static_cast<double>(best->second) * static_cast<double>(key->batch) / static_cast<double>(best->first));
    ++c.scaled;
  }
  return c;
}

}  // namespace dlsim
