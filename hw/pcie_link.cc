#include "hw/pcie_link.h"

#include <cmath>
#include <stdexcept>

#include "common/sim_time.h"

namespace dlsim {

PcieLink::PcieLink(const GpuSpec& spec)
    : h2d_pinned_(spec.pcie_h2d_pinned),
      d2h_pinned_(spec.pcie_d2h_pinned),
      h2d_pageable_(spec.pcie_h2d_pageable),
      d2h_pageable_(spec.pcie_d2h_pageable),
      h2d_latency_ns_(spec.pcie_h2d_latency_ns >= 0 ? spec.pcie_h2d_latency_ns : spec.pcie_latency_ns),
      d2h_latency_ns_(spec.pcie_d2h_latency_ns >= 0 ? spec.pcie_d2h_latency_ns : spec.pcie_latency_ns),
      file_(spec.file) {
  // load_gpu_spec already refuses non-positive rates; a hand-built spec must not divide by zero either.
  if (!(h2d_pinned_ > 0 && d2h_pinned_ > 0 && h2d_pageable_ > 0 && d2h_pageable_ > 0))
    throw std::invalid_argument("PcieLink: every PCIe bandwidth in GpuSpec '" + spec.name + "' must be positive");
}

double PcieLink::bandwidth(CopyDir dir, bool pinned) const {
  if (dir == CopyDir::HostToDevice) return pinned ? h2d_pinned_ : h2d_pageable_;
  return pinned ? d2h_pinned_ : d2h_pageable_;
}

TimeNs PcieLink::latency(CopyDir dir) const {
  return dir == CopyDir::HostToDevice ? h2d_latency_ns_ : d2h_latency_ns_;
}

TimeNs PcieLink::copy_time(CopyDir dir, uint64_t bytes, bool pinned) const {
  if (bytes == 0) return 0;
  const double ns = static_cast<double>(bytes) * 1e9 / bandwidth(dir, pinned);
  const char* key = dir == CopyDir::HostToDevice ? (pinned ? "pcie.h2d_pinned_gb_per_s" : "pcie.h2d_pageable_gb_per_s")
                                                 : (pinned ? "pcie.d2h_pinned_gb_per_s" : "pcie.d2h_pageable_gb_per_s");
  return latency(dir) + checked_duration_ns(ns, file_, key, "a copy of " + std::to_string(bytes) + " bytes");
}

}  // namespace dlsim
