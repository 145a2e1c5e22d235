#include "policies/swap/singa/singa_select.h"

#include <algorithm>
#include <numeric>

namespace dlsim {

std::vector<SwapCandidate> singa_candidates(const SingaTrace& trace, const CopyTimeLine& copy, uint64_t min_bytes,
                                            uint64_t limit) {
  const int peak = trace.peak_index();
  // Each block's accesses in index order.
  std::vector<std::vector<int>> accesses;
  for (int i = 0; i < trace.size(); ++i) {
    const BlockRecord& r = trace.at(i);
    if (r.op != BlockOp::Read && r.op != BlockOp::Write) continue;
    if (static_cast<size_t>(r.tensor) >= accesses.size()) accesses.resize(static_cast<size_t>(r.tensor) + 1);
    accesses[static_cast<size_t>(r.tensor)].push_back(i);
  }
  std::vector<SwapCandidate> kept;
  for (const auto& acc : accesses)
    for (size_t k = 0; k + 1 < acc.size(); ++k) {
      const int r = acc[k], d = acc[k + 1];
      const BlockRecord& a = trace.at(r);
      if (!(r < peak && peak < d) || a.bytes < min_bytes) continue;
      SwapCandidate c;
      c.tensor = a.tensor;
      c.bytes = a.bytes;
      c.r = r;
      c.d = d;
      // a margin running past the next access leaves no absence: [ready, d) is then empty
      c.ready = std::min(d, r + (a.op == BlockOp::Read ? kSingaReadReady : kSingaWriteReady));
      c.doa_origin = trace.at(d).time - a.time;
      c.doa = static_cast<double>(c.doa_origin) - static_cast<double>(copy.out(c.bytes)) -
              static_cast<double>(copy.in(c.bytes));
      c.aoa = c.doa >= 0 ? c.doa * static_cast<double>(c.bytes) : c.doa / static_cast<double>(c.bytes);
      for (int j = r; j < d; ++j) c.wdoa += static_cast<double>(trace.at(j).load) - static_cast<double>(limit);
      kept.push_back(c);
    }
  std::sort(kept.begin(), kept.end(), [](const SwapCandidate& x, const SwapCandidate& y) {
    return x.r != y.r ? x.r < y.r : x.tensor < y.tensor;
  });
  return kept;
}

namespace {
template <class Key>
std::vector<size_t> descending(const std::vector<SwapCandidate>& c, Key key) {
  std::vector<size_t> idx(c.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return key(c[a]) > key(c[b]); });
  return idx;
}
}  // namespace

std::vector<size_t> singa_ranking(const std::vector<SwapCandidate>& c, SingaRank rank) {
  auto by_doa = [](const SwapCandidate& x) { return static_cast<double>(x.doa_origin); };
  auto by_aoa = [](const SwapCandidate& x) { return x.aoa; };
  auto by_wdoa = [](const SwapCandidate& x) { return x.wdoa; };
  switch (rank) {
    case SingaRank::Doa: return descending(c, by_doa);
    case SingaRank::Aoa: return descending(c, by_aoa);
    case SingaRank::Wdoa: return descending(c, by_wdoa);
    case SingaRank::Vote: break;
  }
  std::vector<size_t> votes(c.size(), 0);
  for (const auto& order : {descending(c, by_doa), descending(c, by_aoa), descending(c, by_wdoa)})
    for (size_t place = 0; place < order.size(); ++place) votes[order[place]] += place;
  std::vector<size_t> idx(c.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return votes[a] < votes[b]; });
  return idx;
}

SingaSelection singa_select(const SingaTrace& trace, const std::vector<SwapCandidate>& c,
                            const std::vector<size_t>& ranking, uint64_t limit) {
  std::vector<int64_t> work(static_cast<size_t>(trace.size()));
  for (int i = 0; i < trace.size(); ++i) work[static_cast<size_t>(i)] = static_cast<int64_t>(trace.at(i).load);
  auto peak = [&] { return work.empty() ? int64_t{0} : *std::max_element(work.begin(), work.end()); };
  SingaSelection s;
  int64_t p = peak();
  for (size_t k : ranking) {
    if (p < static_cast<int64_t>(limit)) break;
    const SwapCandidate& x = c[k];
    for (int j = x.ready; j < x.d; ++j) work[static_cast<size_t>(j)] -= static_cast<int64_t>(x.bytes);
    s.chosen.push_back(x);
    p = peak();
  }
  s.ideal_peak = static_cast<uint64_t>(std::max<int64_t>(p, 0));
  s.met = p < static_cast<int64_t>(limit);
  return s;
}

}  // namespace dlsim
