#include "experiment/parallel_section.h"

#include "common/strings.h"

namespace dlsim {

using parallel::FsdpWrap;
using parallel::Layout;
using parallel::ParallelLayout;

const std::vector<std::string>& parallel_section_keys() {
  static const std::vector<std::string> keys = {"dp",   "fsdp",        "zero",         "tp",
                                                "wrap", "param_dtype", "reduce_dtype", "reshard_after_forward",
                                                "bucket_cap_mb", "sequence_parallel", "tp_across_nodes"};
  return keys;
}

namespace {

// A rank count: 1 .. kMaxRanks.
int64_t read_ranks(const YamlMap& m, const std::string& key) {
  const int64_t n = m.get_int(key);
  if (n < 1 || n > parallel::kMaxRanks)
    m.fail(key, "must be a number of GPUs between 1 and " + std::to_string(parallel::kMaxRanks) + ", got " +
                    std::to_string(n));
  return n;
}

std::optional<DType> read_dtype(const YamlMap& m, const std::string& key) {
  if (!m.has(key)) return std::nullopt;
  const std::string v = m.get_string(key);
  if (auto t = parallel::mixed_precision_dtype(v)) return t;
  m.fail(key, "unknown dtype '" + v + "'; valid: fp32, bf16, fp16");
}

// A key that only one layout reads, given with another: named, not ignored.
void only_with(const YamlMap& m, const std::string& key, const std::string& layouts, bool allowed) {
  if (m.has(key) && !allowed) m.fail(key, "applies to " + layouts + " only");
}

}  // namespace

ParallelLayout read_parallel_section(const YamlMap& experiment, const std::string& key) {
  ParallelLayout p;
  if (!experiment.has(key)) return p;
  if (!experiment.get(key).IsMap())
    experiment.fail(key, "expected a mapping such as {dp: 8}, {fsdp: 8} or {zero: 2, dp: 8}");
  const YamlMap m = experiment.get_map(key);
  p.line = experiment.line_of(key);
  m.check_keys(parallel_section_keys());
  const bool dp = m.has("dp"), fsdp = m.has("fsdp"), zero = m.has("zero"), tp = m.has("tp");
  if (dp && fsdp) m.fail("fsdp", "choose dp or fsdp, not both (hybrid sharding is not supported)");
  if (zero && fsdp) m.fail("zero", "ZeRO-3 is fsdp: write {fsdp: N} alone");
  if (zero && !dp) m.fail("zero", "needs the number of data-parallel GPUs beside it: {zero: 1 or 2, dp: N}");
  if (!dp && !fsdp && !tp) m.fail("", "names no layout: give dp, fsdp, zero with dp, or tp");
  only_with(m, "sequence_parallel", "tp", tp);
  only_with(m, "tp_across_nodes", "tp", tp);
  if (tp) {  // the Llama builder's options (workloads/model_options.h); its own errors come back as parallel.tp
    p.tp = read_ranks(m, "tp");
    p.sequence_parallel = m.get_bool("sequence_parallel", false);
    p.tp_across_nodes = m.get_bool("tp_across_nodes", false);
  }
  if (!dp && !fsdp) {  // tensor parallel alone: {tp: T}; the data-parallel options would mean nothing
    for (const char* k : {"bucket_cap_mb", "wrap", "param_dtype", "reduce_dtype", "reshard_after_forward"})
      only_with(m, k, "a data-parallel layout (dp, zero or fsdp)", false);
    return p;
  }
  if (fsdp) {
    p.layout = Layout::Fsdp;
    p.ranks = read_ranks(m, "fsdp");
  } else {
    p.layout = zero ? Layout::Zero : Layout::Ddp;
    p.ranks = read_ranks(m, "dp");
  }
  if (p.ranks * p.tp > parallel::kMaxRanks)
    m.fail("tp", "the job's GPUs (" + std::string(fsdp ? "fsdp" : "dp") + " x tp = " + std::to_string(p.ranks * p.tp) +
                     ") exceed " + std::to_string(parallel::kMaxRanks));
  if (zero) {
    const int64_t s = m.get_int("zero");
    if (s == 3) m.fail("zero", "ZeRO-3 is fsdp: write {fsdp: N}");
    if (s != 1 && s != 2) m.fail("zero", "must be 1 (optimizer state sharded) or 2 (and gradients), got " + std::to_string(s));
    p.zero_stage = static_cast<int>(s);
  }
  only_with(m, "bucket_cap_mb", "dp and zero", !fsdp);
  for (const char* k : {"wrap", "param_dtype", "reduce_dtype", "reshard_after_forward"}) only_with(m, k, "fsdp", fsdp);
  p.bucket_cap_mb = m.get_int("bucket_cap_mb", 25);
  if (p.bucket_cap_mb < 1 || p.bucket_cap_mb > (1 << 20))
    m.fail("bucket_cap_mb", "must be between 1 and 1048576 MiB, got " + std::to_string(p.bucket_cap_mb));
  p.reshard_after_forward = m.get_bool("reshard_after_forward", true);
  if (m.has("wrap")) {
    const std::string w = m.get_string("wrap");
    if (w == "blocks") p.wrap = FsdpWrap::Blocks;
    else if (w == "root") p.wrap = FsdpWrap::Root;
    else m.fail("wrap", "unknown wrap '" + w + "'; valid: blocks (one unit per model block and the root), root");
  }
  p.param_dtype = read_dtype(m, "param_dtype");
  p.reduce_dtype = read_dtype(m, "reduce_dtype");
  return p;
}

}  // namespace dlsim
