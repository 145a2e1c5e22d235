#include "sim/check/copy_matching.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace dlsim {

std::vector<const CopyRecord*> match_copies(const std::vector<Command>& cmds, const Trace& tr, int iteration) {
  using Key = std::tuple<TensorId, bool, int>;  // tensor, to_host, stream (-1: any)
  bool streams_known = true;
  for (const CopyRecord& c : tr.copies)
    if (c.iteration == iteration && c.stream < 0) streams_known = false;
  std::map<Key, std::vector<const CopyRecord*>> records;  // by start
  for (const CopyRecord& c : tr.copies)
    if (c.iteration == iteration) records[{c.tensor, c.to_host, streams_known ? c.stream : -1}].push_back(&c);
  for (auto& [k, v] : records)
    std::stable_sort(v.begin(), v.end(), [](const CopyRecord* a, const CopyRecord* b) { return a->start < b->start; });
  std::vector<const CopyRecord*> out(cmds.size(), nullptr);
  std::map<Key, size_t> seen;
  for (size_t i = 0; i < cmds.size(); ++i) {
    const Command& c = cmds[i];
    if (c.kind != CmdKind::CopyIn && c.kind != CmdKind::CopyOut) continue;
    const Key key{c.tensor, c.kind == CmdKind::CopyOut, streams_known ? c.stream : -1};
    const size_t k = seen[key]++;
    auto r = records.find(key);
    if (r != records.end() && k < r->second.size()) out[i] = r->second[k];
  }
  return out;
}

}  // namespace dlsim
