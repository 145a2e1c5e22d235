#include "sim/concurrent_kernels.h"

#include "sim/device_model.h"

namespace dlsim {

namespace {

// The costs given, by op id.
class GivenCosts : public KernelCostModel {
 public:
  explicit GivenCosts(const std::vector<ConcurrentKernel>& k) : k_(k) {}
  KernelCost cost(const Graph&, const Op& op) const override { return k_[static_cast<size_t>(op.id)].cost; }

 private:
  const std::vector<ConcurrentKernel>& k_;
};

// Kernels only: no copy is ever issued.
class NoLink : public TransferModel {
 public:
  TimeNs copy_time(CopyDir, uint64_t, bool) const override { return 0; }
  double bandwidth(CopyDir, bool) const override { return 1; }
  TimeNs latency(CopyDir) const override { return 0; }
};

struct Ignore : DeviceListener {
  void command_done(int) override {}
};

}  // namespace

TimeNs concurrent_makespan(const GpuSpec& gpu, const std::vector<ConcurrentKernel>& kernels) {
  Graph g;
  for (size_t i = 0; i < kernels.size(); ++i) {
    Op o;
    o.name = "k" + std::to_string(i);
    o.bytes_read = kernels[i].bytes;
    g.add_op(o);
  }
  GivenCosts costs(kernels);
  NoLink link;
  EventQueue queue;
  Ignore listener;
  const int streams = static_cast<int>(kernels.size());
  DeviceModel device(g, gpu, costs, link, streams, 0, queue, listener, nullptr);
  for (int s = 0; s < streams; ++s) device.enqueue(s, {CmdKind::Launch, 0, static_cast<OpId>(s), kNoTensor, -1, 0});
  TimeNs now = 0;
  device.settle(now);
  while (!queue.empty()) {
    const Event e = queue.pop();
    now = e.time;
    device.handle(e, now);
    device.settle(now);
  }
  return now;
}

}  // namespace dlsim
