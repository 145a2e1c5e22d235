#include "workloads/multi_tensor_apply.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace dlsim {

int64_t multi_tensor_max_tensors(int lists) {
  static constexpr int64_t kMaxTensors[kMultiTensorMaxLists] = {110, 64, 48, 36, 30};  // depth_to_max_tensors
  if (lists < 1 || lists > kMultiTensorMaxLists)
    throw std::invalid_argument("multi_tensor_apply runs 1 to " + std::to_string(kMultiTensorMaxLists) +
                                " tensor lists, not " + std::to_string(lists));
  return kMaxTensors[lists - 1];
}

std::vector<MultiTensorLaunch> multi_tensor_launches(const std::vector<int64_t>& numels, int lists) {
  const int64_t max_tensors = multi_tensor_max_tensors(lists);
  std::vector<MultiTensorLaunch> out;
  MultiTensorLaunch cur;
  for (size_t t = 0; t < numels.size(); ++t) {
    const int64_t n = numels[t];
    if (n <= 0) continue;  // an empty tensor takes no slot
    ++cur.tensors;
    const int64_t chunks = (n + kMultiTensorChunk - 1) / kMultiTensorChunk;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t chunk = std::min(kMultiTensorChunk, n - c * kMultiTensorChunk);
      ++cur.blocks;
      cur.elements += chunk;
      cur.largest_chunk = std::max(cur.largest_chunk, chunk);
      const bool last = c == chunks - 1;
      if ((cur.tensors == max_tensors && last) || cur.blocks == kMultiTensorMaxBlocks) {
        cur.closed_by = t;
        out.push_back(cur);
        cur = MultiTensorLaunch{};
        cur.tensors = last ? 0 : 1;  // a tensor cut by a full table is the next launch's first
      }
    }
  }
  if (cur.blocks > 0) {
    size_t last = numels.size();
    while (last > 0 && numels[last - 1] <= 0) --last;
    cur.closed_by = last - 1;
    out.push_back(cur);
  }
  return out;
}

std::vector<MultiTensorCharge> multi_tensor_charges(const std::vector<int64_t>& numels, int lists,
                                                    int64_t bytes_per_element) {
  std::vector<MultiTensorCharge> out(numels.size());
  for (const MultiTensorLaunch& l : multi_tensor_launches(numels, lists)) {
    ++out[l.closed_by].launches;
    out[l.closed_by].chunk_bytes += l.largest_chunk * bytes_per_element;
  }
  return out;
}

}  // namespace dlsim
