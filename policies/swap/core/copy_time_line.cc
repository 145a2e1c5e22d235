#include "policies/swap/core/copy_time_line.h"

#include <algorithm>
#include <cmath>

namespace dlsim {

namespace {
TimeNs line(double per_byte, double latency, uint64_t bytes) {
  return static_cast<TimeNs>(std::llround(latency + per_byte * static_cast<double>(bytes)));
}

// Ordinary least squares of y on x: (slope, intercept).
std::pair<double, double> least_squares(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  return {slope, (sy - slope * sx) / n};
}
}  // namespace

TimeNs CopyTimeLine::out(uint64_t bytes) const { return line(out_ns_per_byte, out_latency_ns, bytes); }
TimeNs CopyTimeLine::in(uint64_t bytes) const { return line(in_ns_per_byte, in_latency_ns, bytes); }

CopyTimeLine copy_time_from_link(const TransferModel& link) {
  CopyTimeLine c;
  c.out_ns_per_byte = 1e9 / link.bandwidth(CopyDir::DeviceToHost, true);
  c.out_latency_ns = static_cast<double>(link.latency(CopyDir::DeviceToHost));
  c.in_ns_per_byte = 1e9 / link.bandwidth(CopyDir::HostToDevice, true);
  c.in_latency_ns = static_cast<double>(link.latency(CopyDir::HostToDevice));
  return c;
}

CopyTimeLine fit_copy_time(const TransferModel& link, const std::vector<uint64_t>& block_bytes) {
  std::vector<uint64_t> sizes = block_bytes;
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (sizes.size() < 2) return copy_time_from_link(link);
  std::vector<double> x, out, in;
  for (uint64_t b : sizes) {
    x.push_back(static_cast<double>(b));
    out.push_back(static_cast<double>(link.copy_time(CopyDir::DeviceToHost, b, true)));
    in.push_back(static_cast<double>(link.copy_time(CopyDir::HostToDevice, b, true)));
  }
  CopyTimeLine c;
  std::tie(c.out_ns_per_byte, c.out_latency_ns) = least_squares(x, out);
  std::tie(c.in_ns_per_byte, c.in_latency_ns) = least_squares(x, in);
  return c;
}

}  // namespace dlsim
