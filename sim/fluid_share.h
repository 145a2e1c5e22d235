#pragma once
// Fluid sharing of one resource by the activities running on it. Each activity's progress is counted in
// "standalone nanoseconds" (how long it would take with the resource to itself); a rate of 1 means full speed.
#include <cstdint>
#include <vector>

namespace dlsim {

// Kernels sharing the SMs. demands[i] in (0, 1] is the share of the GPU kernel i can occupy on its own.
// When the demands fit (sum <= 1) every kernel runs at full speed; otherwise the SMs are split max-min fairly
// (water-filling: small demands are met in full, the rest split what remains equally) and a kernel that gets
// a share a_i of its demand d_i progresses at rate a_i / d_i. `order` is scratch space (no allocation once
// it has grown). Ties are broken by index, so the result is deterministic.
void max_min_fair_rates(const std::vector<double>& demands, std::vector<double>& rates,
                        std::vector<uint32_t>& order);

}  // namespace dlsim
