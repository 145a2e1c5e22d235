#pragma once
// Hand-checkable stand-ins for the sim/ tests: a kernel cost model read from stand-in ops' attributes, a linear PCIe
// link, three tiny pools (straight cudaMalloc, an exact-size cache, one that leaks) and a small graph builder.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "hw/cost_model.h"
#include "hw/gpu_spec.h"
#include "policies/pool/pool_policy.h"
#include "workloads/graph.h"

namespace dlsim::testing {

// A stand-in op's (OtherOp::StandIn, made by op() below) cost from its attributes: the duration from ns, the SM
// share from sm_permille (1000 = the whole GPU), the grid from blocks (0: one wave over the SM share) and
// blocks_per_sm. Any other op (a zoo graph's) costs what a stand-in that sets none of them costs, the defaults
// workloads/op_attributes.cc declares: 1000 ns on the whole GPU.
class AttrKernels : public KernelCostModel {
 public:
  KernelCost cost(const Graph&, const Op& op) const override {
    static const Op defaults = [] {
      Op o;
      o.other = OtherOp::StandIn;
      return o;
    }();
    const Op& s = op.kind == OpKind::Other && op.other == OtherOp::StandIn ? op : defaults;
    return {s.attr(Attr::ns), static_cast<double>(s.attr(Attr::sm_permille)) / 1000.0, s.attr(Attr::blocks),
            static_cast<int>(s.attr(Attr::blocks_per_sm))};
  }
};

// latency + bytes / bandwidth, with bandwidths in bytes per ns so that times are easy to check.
class LinearLink : public TransferModel {
 public:
  LinearLink(double h2d_bytes_per_ns, double d2h_bytes_per_ns, TimeNs latency)
      : h2d_(h2d_bytes_per_ns), d2h_(d2h_bytes_per_ns), latency_(latency) {}
  TimeNs copy_time(CopyDir dir, uint64_t bytes, bool) const override {
    return latency_ + static_cast<TimeNs>(std::ceil(static_cast<double>(bytes) / per_ns(dir)));
  }
  double bandwidth(CopyDir dir, bool) const override { return per_ns(dir) * 1e9; }
  TimeNs latency(CopyDir) const override { return latency_; }

 private:
  double per_ns(CopyDir d) const { return d == CopyDir::HostToDevice ? h2d_ : d2h_; }
  double h2d_, d2h_;
  TimeNs latency_;
};

inline GpuSpec fake_gpu() {
  GpuSpec s;
  s.name = "fake";
  s.sms = 100;
  s.memory_bytes = uint64_t{1} << 30;
  s.copy_engines = 2;
  s.launch_overhead_ns = 0;
  s.malloc_base_ns = 10000;
  s.malloc_ns_per_gib = 0;
  s.free_base_ns = 3000;
  s.free_ns_per_gib = 0;
  s.host_adam_bytes_per_s = 1e9;  // a CPU optimizer step: 1 byte of fp32 state per ns
  return s;
}

// Base for the fake pools: counts allocations and the iteration_begin and iteration_end calls.
class FakePoolBase : public PoolPolicy {
 public:
  const PoolStats& stats() const override { return stats_; }
  void iteration_begin(int i) override { iteration_begins.push_back(i); }
  void iteration_end(int i) override { iteration_ends.push_back(i); }
  std::vector<int> iteration_begins, iteration_ends;

 protected:
  PoolStats stats_;
};

// Every allocation a cudaMalloc, every free a cudaFree.
class DirectPool : public FakePoolBase {
 public:
  explicit DirectPool(DeviceMemory& d) : d_(d) {}
  std::string name() const override { return "direct"; }
  std::optional<DevPtr> allocate(const AllocRequest& r) override { return d_.malloc(r.bytes); }
  void deallocate(DevPtr p) override { d_.free(p); }

 private:
  DeviceMemory& d_;
};

// Keeps freed blocks by exact size and reuses them; never returns memory to the device.
class ExactCachePool : public FakePoolBase {
 public:
  explicit ExactCachePool(DeviceMemory& d) : d_(d) {}
  std::string name() const override { return "exact-cache"; }
  std::optional<DevPtr> allocate(const AllocRequest& r) override {
    auto it = cached_.find(r.bytes);
    if (it != cached_.end()) {
      const DevPtr p = it->second;
      cached_.erase(it);
      size_of_[p] = r.bytes;
      return p;
    }
    auto p = d_.malloc(r.bytes);
    if (p) size_of_[*p] = r.bytes;
    return p;
  }
  void deallocate(DevPtr p) override { cached_.emplace(size_of_.at(p), p); }

 private:
  DeviceMemory& d_;
  std::multimap<uint64_t, DevPtr> cached_;
  std::map<DevPtr, uint64_t> size_of_;
};

// Maps a fresh 2 MiB-aligned range per allocation and unmaps it on free (expandable segments' device calls).
class MappingPool : public FakePoolBase {
 public:
  explicit MappingPool(DeviceMemory& d) : d_(d) {}
  std::string name() const override { return "mapping"; }
  std::optional<DevPtr> allocate(const AllocRequest& r) override {
    auto range = d_.reserve_address_range(r.bytes);
    if (!range || !d_.map_pages(*range, r.bytes)) return std::nullopt;
    size_of_[*range] = r.bytes;
    return range;
  }
  void deallocate(DevPtr p) override {
    d_.unmap_pages(p, size_of_.at(p));
    d_.release_address_range(p);
    size_of_.erase(p);
  }

 private:
  DeviceMemory& d_;
  std::map<DevPtr, uint64_t> size_of_;
};

// Never frees nor reuses: every allocation is a new cudaMalloc (to run out of memory on purpose).
class LeakyPool : public FakePoolBase {
 public:
  explicit LeakyPool(DeviceMemory& d) : d_(d) {}
  std::string name() const override { return "leaky"; }
  std::optional<DevPtr> allocate(const AllocRequest& r) override { return d_.malloc(r.bytes); }
  void deallocate(DevPtr) override {}

 private:
  DeviceMemory& d_;
};

inline TensorId tensor(Graph& g, const std::string& name, uint64_t bytes, bool persistent = false) {
  Tensor t;
  t.name = name;
  t.bytes = bytes;
  t.shape = {static_cast<int64_t>(bytes / 4)};
  t.persistent = persistent;
  t.kind = persistent ? TensorKind::Weight : TensorKind::Activation;
  return g.add_tensor(t);
}

inline OpId op(Graph& g, const std::string& name, std::vector<TensorId> in, std::vector<TensorId> out,
               int64_t ns = 1000, int64_t sm_permille = 1000, TensorId workspace = kNoTensor) {
  Op o;
  o.name = name;
  o.inputs = std::move(in);
  o.outputs = std::move(out);
  o.workspace = workspace;
  o.other = OtherOp::StandIn;
  o.set_attr(Attr::ns, ns);
  o.set_attr(Attr::sm_permille, sm_permille);
  return g.add_op(o);
}

// f0: x -> big (1 MB);  f1: big -> s1;  f2: s1 -> s2;  f3: s2 -> tmp (1 MB, slow);  f4: tmp -> s3;
// f5: (s3, big) -> y.  `big` is idle from f1 to f5: swap it out after f1 and back in after f4, when tmp is dead.
struct Chain {
  Graph g;
  TensorId x, big, s1, s2, tmp, s3, y;
  Chain() {
    x = tensor(g, "x", 1000);
    big = tensor(g, "big", 1000000);
    s1 = tensor(g, "s1", 1000);
    s2 = tensor(g, "s2", 1000);
    tmp = tensor(g, "tmp", 1000000);
    s3 = tensor(g, "s3", 1000);
    y = tensor(g, "y", 1000);
    op(g, "f0", {x}, {big}, 1000);
    op(g, "f1", {big}, {s1}, 1000);
    op(g, "f2", {s1}, {s2}, 1000);
    op(g, "f3", {s2}, {tmp}, 100000);
    op(g, "f4", {tmp}, {s3}, 1000);
    op(g, "f5", {s3, big}, {y}, 1000);
  }
};

}  // namespace dlsim::testing
