#include "sim/fluid_share.h"

#include <algorithm>

namespace dlsim {

void max_min_fair_rates(const std::vector<double>& demands, std::vector<double>& rates,
                        std::vector<uint32_t>& order) {
  const size_t n = demands.size();
  rates.assign(n, 1.0);
  double total = 0;
  for (double d : demands) total += d;
  if (total <= 1.0) return;

  order.resize(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return demands[a] < demands[b]; });
  double capacity = 1.0;
  size_t left = n;
  for (uint32_t i : order) {
    const double share = capacity / static_cast<double>(left);
    const double granted = std::min(demands[i], share);
    rates[i] = granted / demands[i];
    capacity -= granted;
    --left;
  }
}

}  // namespace dlsim
