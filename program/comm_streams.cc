#include "program/comm_streams.h"

#include <map>

namespace dlsim {

bool has_collectives(const Graph& g) {
  for (const Op& op : g.ops())
    if (is_collective(op.kind)) return true;
  return false;
}

Schedule with_comm_streams(const Graph& g, const Schedule& s) {
  if (s.stream_of.size() != g.ops().size() || !has_collectives(g)) return s;
  std::map<int64_t, int> stream_of_tag;  // ordered: streams in increasing tag order
  for (const Op& op : g.ops())
    if (is_collective(op.kind)) stream_of_tag.emplace(op.attr(Attr::comm_stream), 0);
  Schedule out = s;
  for (auto& [tag, stream] : stream_of_tag) stream = out.num_streams++;
  for (const Op& op : g.ops())
    if (is_collective(op.kind)) out.stream_of[static_cast<size_t>(op.id)] = stream_of_tag.at(op.attr(Attr::comm_stream));
  return out;
}

}  // namespace dlsim
