#pragma once
// Address ranges a pool has taken back, each with where its last owner was when it was freed (a `Mark`: a
// point in a stream's work). An allocation that reuses part of a range must be ordered after that mark when it
// runs on another stream. Both backends keep one (sim/executor.cc with its own marker events, the CUDA
// executor with real events): the bookkeeping is the same, only the mark differs.
// Ranges stay disjoint: a range is added when its memory was allocated, and allocating it cut every older
// range out of it (take()).
#include <cstdint>
#include <iterator>
#include <map>

namespace dlsim {

template <class Mark>
class FreedRanges {
 public:
  void add(uint64_t addr, uint64_t bytes, const Mark& m) {
    if (bytes > 0) ranges_[addr] = Range{addr + bytes, m};
  }
  // Calls f(mark) for every range overlapping [addr, addr + bytes) and forgets the overlapped parts: the new
  // owner's own free will order anyone after it.
  template <class F>
  void take(uint64_t addr, uint64_t bytes, F&& f) {
    if (bytes == 0 || ranges_.empty()) return;
    const uint64_t end = addr + bytes;
    auto it = ranges_.upper_bound(addr);
    if (it != ranges_.begin() && std::prev(it)->second.end > addr) --it;
    while (it != ranges_.end() && it->first < end) {
      const uint64_t lo = it->first;
      const Range r = it->second;
      f(r.mark);
      it = ranges_.erase(it);
      if (lo < addr) ranges_[lo] = Range{addr, r.mark};  // the parts outside the allocation stay
      if (r.end > end) ranges_[end] = Range{r.end, r.mark};
    }
  }
  size_t size() const { return ranges_.size(); }
  void clear() { ranges_.clear(); }

 private:
  struct Range {
    uint64_t end;
    Mark mark;
  };
  std::map<uint64_t, Range> ranges_;  // by start address
};

}  // namespace dlsim
