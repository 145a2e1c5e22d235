#include "sim/fluid_share.h"

#include <catch2/catch.hpp>

using namespace dlsim;

namespace {
std::vector<double> rates_of(const std::vector<double>& demands) {
  std::vector<double> rates;
  std::vector<uint32_t> scratch;
  max_min_fair_rates(demands, rates, scratch);
  return rates;
}
}  // namespace

TEST_CASE("demands that fit the GPU all run at full speed") {
  CHECK(rates_of({0.5, 0.5}) == std::vector<double>{1, 1});
  CHECK(rates_of({0.2, 0.3, 0.1}) == std::vector<double>{1, 1, 1});
  CHECK(rates_of({1.0}) == std::vector<double>{1});
  CHECK(rates_of({}).empty());
}

TEST_CASE("oversubscribed demands are water-filled: small ones in full, the rest equally") {
  auto r = rates_of({1.0, 1.0});
  CHECK(r[0] == Approx(0.5));
  CHECK(r[1] == Approx(0.5));
  r = rates_of({1.0, 0.25});  // 0.25 met in full; 0.75 left to the other
  CHECK(r[0] == Approx(0.75));
  CHECK(r[1] == Approx(1.0));
  r = rates_of({0.6, 0.6, 0.1});  // 0.1 met; 0.45 each for the others
  CHECK(r[0] == Approx(0.45 / 0.6));
  CHECK(r[1] == Approx(0.45 / 0.6));
  CHECK(r[2] == Approx(1.0));
  double total = 0;
  const std::vector<double> d{0.9, 0.3, 0.7, 0.2};
  r = rates_of(d);
  for (size_t i = 0; i < d.size(); ++i) total += r[i] * d[i];
  CHECK(total == Approx(1.0));  // the GPU is fully used
}
