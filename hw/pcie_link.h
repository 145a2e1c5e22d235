#pragma once
#include <string>
// The host link: each transfer costs a fixed latency (the file's, or its direction's when given apart) plus its
// bytes at the achieved rate of its direction and host-memory kind (pinned or pageable). Sharing between concurrent transfers is the simulator's business.
#include "hw/cost_model.h"
#include "hw/gpu_spec.h"

namespace dlsim {

class PcieLink : public TransferModel {
 public:
  explicit PcieLink(const GpuSpec& spec);

  // latency + bytes / bandwidth, rounded to the nearest ns; 0 bytes is no transfer at all: 0 ns.
  TimeNs copy_time(CopyDir dir, uint64_t bytes, bool pinned) const override;
  double bandwidth(CopyDir dir, bool pinned) const override;  // bytes/s
  TimeNs latency(CopyDir dir) const override;

 private:
  double h2d_pinned_, d2h_pinned_, h2d_pageable_, d2h_pageable_;
  TimeNs h2d_latency_ns_, d2h_latency_ns_;
  std::string file_;  // the hardware file, for errors about durations it makes too long
};

}  // namespace dlsim
