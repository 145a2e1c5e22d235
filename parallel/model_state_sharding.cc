#include "parallel/model_state_sharding.h"

#include <algorithm>
#include <map>

#include "common/config_error.h"

namespace dlsim::parallel {
namespace {

constexpr int64_t kAdamStepBytes = 4;  // torch.tensor(0.0): a float32 scalar per parameter

[[noreturn]] void bad(const std::string& key, const std::string& message) { throw ConfigError("", 0, key, message); }

void check_parameter(const ModelParameter& p) {
  if (p.element_bytes <= 0) bad(p.name + ".element_bytes", "must be positive");
  for (int64_t d : p.shape)
    if (d < 0) bad(p.name + ".shape", "a dimension is negative");
}

int64_t rows_of(const ModelParameter& p) { return p.shape.empty() ? 1 : p.shape[0]; }

// bytes of one dim-0 row: the product of the other dimensions times the element size
int64_t row_bytes(const ModelParameter& p) {
  int64_t b = p.element_bytes;
  for (size_t i = 1; i < p.shape.size(); ++i) b *= p.shape[i];
  return b;
}

}  // namespace

int64_t parameter_bytes(const ModelParameter& p) {
  check_parameter(p);
  return rows_of(p) * row_bytes(p);
}

std::vector<size_t> gradient_ready_order(size_t parameter_count, const std::vector<size_t>& forward_use_order) {
  if (forward_use_order.size() != parameter_count)
    bad("forward_use_order", "names " + std::to_string(forward_use_order.size()) + " parameters, the model has " +
                                 std::to_string(parameter_count));
  std::vector<bool> seen(parameter_count, false);
  for (size_t i : forward_use_order) {
    if (i >= parameter_count || seen[i])
      bad("forward_use_order", "index " + std::to_string(i) + " is out of range or repeated");
    seen[i] = true;
  }
  return {forward_use_order.rbegin(), forward_use_order.rend()};
}

std::vector<DdpBucket> ddp_rebuilt_buckets(const std::vector<ModelParameter>& params,
                                           const std::vector<size_t>& ready_order, const DdpBucketCaps& caps) {
  if (caps.first_bucket_bytes <= 0 || caps.bucket_cap_bytes <= 0) bad("bucket caps", "must be positive");
  // validates the order (a permutation of the parameters) by reversing it twice
  gradient_ready_order(params.size(), ready_order);
  struct Open {
    DdpBucket bucket;
    bool first = true;  // its cap is still first_bucket_bytes
  };
  std::map<std::string, Open> open;  // per dtype
  std::vector<std::string> dtype_order;
  std::vector<DdpBucket> closed;
  for (size_t i : ready_order) {
    const ModelParameter& p = params[i];
    auto [it, inserted] = open.try_emplace(p.dtype);
    if (inserted) dtype_order.push_back(p.dtype);
    Open& o = it->second;
    o.bucket.dtype = p.dtype;
    o.bucket.bytes += parameter_bytes(p);
    o.bucket.parameters.push_back(i);
    if (o.bucket.bytes >= (o.first ? caps.first_bucket_bytes : caps.bucket_cap_bytes)) {
      closed.push_back(std::move(o.bucket));
      o.bucket = DdpBucket{};
      o.first = false;
    }
  }
  for (const std::string& d : dtype_order)
    if (!open[d].bucket.parameters.empty()) closed.push_back(std::move(open[d].bucket));
  return closed;
}

RankModelState ddp_rank_state(const std::vector<ModelParameter>& params) {
  int64_t total = 0;
  for (const ModelParameter& p : params) total += parameter_bytes(p);
  const Bytes full{total, total};
  const int64_t step = kAdamStepBytes * static_cast<int64_t>(params.size());
  return RankModelState{full, full, full, full, Bytes{step, step}};
}

FsdpLocalShard fsdp_local_shard(const ModelParameter& p, int world_size, int rank) {
  if (world_size < 1) bad("world_size", "must be at least 1, got " + std::to_string(world_size));
  if (rank < 0 || rank >= world_size)
    bad("rank", std::to_string(rank) + " is outside [0, " + std::to_string(world_size) + ")");
  check_parameter(p);
  const int64_t rows = rows_of(p);
  FsdpLocalShard s;
  s.chunk_rows = (rows + world_size - 1) / world_size;
  const int64_t begin = s.chunk_rows * rank;
  s.local_rows = begin >= rows ? 0 : std::min(s.chunk_rows, rows - begin);
  s.local_bytes = s.local_rows * row_bytes(p);
  s.storage_bytes = s.chunk_rows * row_bytes(p);
  return s;
}

FsdpRankState fsdp_rank_state(const std::vector<ModelParameter>& params, int world_size, int rank) {
  FsdpRankState r;
  std::map<std::string, size_t> unit_index;
  for (const ModelParameter& p : params) {
    const FsdpLocalShard s = fsdp_local_shard(p, world_size, rank);
    r.shards.push_back(s);
    r.state.params.logical += s.local_bytes;
    r.state.params.storage += s.storage_bytes;
    auto [it, inserted] = unit_index.try_emplace(p.unit, r.units.size());
    if (inserted) r.units.push_back(FsdpUnitGather{p.unit, {}});
    Bytes& g = r.units[it->second].bytes;
    g.logical += parameter_bytes(p);
    g.storage += s.chunk_rows * world_size * row_bytes(p);
  }
  r.state.grads = r.state.params;  // FSDP2 reduce-scatters into a gradient shaped like the padded shard
  r.state.exp_avg = Bytes{r.state.params.logical, r.state.params.logical};  // AdamW's zeros_like of the local shard
  r.state.exp_avg_sq = r.state.exp_avg;
  const int64_t step = kAdamStepBytes * static_cast<int64_t>(params.size());
  r.state.step = Bytes{step, step};
  return r;
}

}  // namespace dlsim::parallel
