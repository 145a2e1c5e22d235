#pragma once
// A PoolPolicy that forwards to another and writes down every call as an AllocTraceOp (tensor ids in call
// order, the stream of each request), so that a simulated run's exact allocation sequence can be replayed
// through other code: the upstream allocators' own sources (tests/upstream/), or another pool.
#include <map>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "policies/pool/pool_policy.h"
#include "policies/pool/testing/synthetic_alloc_trace.h"

namespace dlsim::testing {

class RecordingPool : public PoolPolicy {
 public:
  explicit RecordingPool(std::unique_ptr<PoolPolicy> inner) : inner_(std::move(inner)) {}

  std::string name() const override { return inner_->name(); }
  std::optional<DevPtr> allocate(const AllocRequest& req) override {
    const uint32_t id = next_id_++;
    ops_.push_back({true, id, req.bytes, req.stream});
    auto p = inner_->allocate(req);
    if (p) live_.emplace(*p, id);
    return p;
  }
  void deallocate(DevPtr p) override {
    auto it = live_.find(p);
    if (it == live_.end()) throw std::logic_error("RecordingPool: free of an address it did not hand out");
    ops_.push_back({false, it->second, 0, 0});
    live_.erase(it);
    inner_->deallocate(p);
  }
  void iteration_begin(int iteration) override { inner_->iteration_begin(iteration); }
  void iteration_end(int iteration) override { inner_->iteration_end(iteration); }
  const PoolStats& stats() const override { return inner_->stats(); }
  nlohmann::json report() const override { return inner_->report(); }
  uint64_t up_front_bytes() const override { return inner_->up_front_bytes(); }
  bool holds_frees_for_other_streams() const override { return inner_->holds_frees_for_other_streams(); }

  const std::vector<AllocTraceOp>& ops() const { return ops_; }

 private:
  std::unique_ptr<PoolPolicy> inner_;
  std::vector<AllocTraceOp> ops_;
  std::map<DevPtr, uint32_t> live_;
  uint32_t next_id_ = 0;
};

}  // namespace dlsim::testing
