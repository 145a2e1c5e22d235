#include "policies/planners/dsa_instance.h"

#include <algorithm>
#include <stdexcept>

namespace dlsim {

uint64_t placement_height(const std::vector<DsaBuffer>& buffers, const std::vector<uint64_t>& offsets) {
  if (offsets.size() != buffers.size()) throw std::invalid_argument("placement_height: one offset per buffer");
  uint64_t h = 0;
  for (size_t i = 0; i < buffers.size(); ++i) h = std::max(h, offsets[i] + buffers[i].size);
  return h;
}

}  // namespace dlsim
