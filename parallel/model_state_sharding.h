#pragma once
// Model-state bytes per GPU under data parallelism, formed the way PyTorch forms them (the rules were read off
// PyTorch's own accounting on CPU, validate/torch/torch_distributed_memory.py, and its fixtures check this file):
//  - DDP keeps a full replica of parameters, gradients and AdamW state on every rank. Its reducer groups gradients
//    into buckets; after the first backward it rebuilds them in gradient-ready order, closing the first bucket of
//    a dtype once it holds at least first_bucket_bytes (1 MiB) and every later one at bucket_cap_bytes (25 MiB).
//  - FSDP2 (fully_shard) splits each parameter on dim 0 into chunks of ceil(rows / world) rows; rank r holds rows
//    [r * chunk, min(rows, (r + 1) * chunk)). Parameter and gradient storage is padded to a whole chunk; AdamW's
//    exp_avg / exp_avg_sq follow the unpadded local shard. A unit's all-gather brings back all its parameters,
//    into padded storage (chunk * world rows per parameter).
// AdamW's `step` is a float32 scalar tensor per parameter on every rank (4 bytes each), sharded or not.
// Byte counts only: no timing, no activations. The simulator does not call this yet.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dlsim::parallel {

struct ModelParameter {
  std::string name;
  std::vector<int64_t> shape;  // empty: a scalar (one element, one row)
  std::string dtype;           // buckets never mix dtypes
  int64_t element_bytes = 4;
  std::string unit;  // the FSDP unit that all-gathers it (e.g. "model.layers.0", "(root)"); unused by DDP
};

int64_t parameter_bytes(const ModelParameter& p);

// A (logical, storage) pair: logical counts the elements a tensor shows, storage what its allocation holds.
struct Bytes {
  int64_t logical = 0;
  int64_t storage = 0;
};

// What one rank keeps between steps, with an AdamW optimizer.
struct RankModelState {
  Bytes params;
  Bytes grads;
  Bytes exp_avg;
  Bytes exp_avg_sq;
  Bytes step;  // 4 bytes per parameter
};

// --- DDP ---------------------------------------------------------------------------------------------------------

struct DdpBucketCaps {
  int64_t first_bucket_bytes = 1 << 20;       // torch.distributed's _DEFAULT_FIRST_BUCKET_BYTES
  int64_t bucket_cap_bytes = 25LL << 20;      // DistributedDataParallel(bucket_cap_mb=25)
};

struct DdpBucket {
  std::string dtype;
  int64_t bytes = 0;
  std::vector<size_t> parameters;  // indices into the parameter list, in the order the bucket holds them
};

// The order in which gradients become ready in backward, from the order in which forward first uses each
// parameter (indices into the parameter list, each once): backward visits the uses in reverse. For a model whose
// forward uses parameters in registration order (the two-layer MLP) that is reverse registration order; a Llama
// decoder layer registers its norms after its MLP but uses them first, so its order is given explicitly.
std::vector<size_t> gradient_ready_order(size_t parameter_count, const std::vector<size_t>& forward_use_order);

// The buckets after DDP's rebuild (from step 2 on): greedy over the ready order, one open bucket per dtype, a
// bucket closed once its bytes reach its cap; buckets listed in the order they closed, open ones last.
std::vector<DdpBucket> ddp_rebuilt_buckets(const std::vector<ModelParameter>& params,
                                           const std::vector<size_t>& ready_order, const DdpBucketCaps& caps = {});

// Every rank holds everything (DDP's separate bucket buffers, with gradient_as_bucket_view=false, are not counted:
// PyTorch's accounting counts .grad only).
RankModelState ddp_rank_state(const std::vector<ModelParameter>& params);

// --- FSDP2 -------------------------------------------------------------------------------------------------------

struct FsdpLocalShard {
  int64_t chunk_rows = 0;     // ceil(rows / world)
  int64_t local_rows = 0;     // rows this rank holds (0 when the chunks run out before it)
  int64_t local_bytes = 0;    // parameter and gradient, logical
  int64_t storage_bytes = 0;  // padded to chunk_rows
};

struct FsdpUnitGather {
  std::string unit;
  Bytes bytes;  // logical: the full parameters; storage: chunk_rows * world rows each
};

struct FsdpRankState {
  RankModelState state;
  std::vector<FsdpLocalShard> shards;  // one per parameter, in registration order
  std::vector<FsdpUnitGather> units;   // in order of first appearance in the parameter list
};

FsdpLocalShard fsdp_local_shard(const ModelParameter& p, int world_size, int rank);
FsdpRankState fsdp_rank_state(const std::vector<ModelParameter>& params, int world_size, int rank);

}  // namespace dlsim::parallel
