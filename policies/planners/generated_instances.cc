#include "policies/planners/generated_instances.h"

namespace dlsim {

namespace {

// splitmix64: a small, portable generator.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }
};

struct Piece {
  uint64_t lo, hi;
  int64_t t0, t1;
};

}  // namespace

std::vector<DsaBuffer> guillotine_instance(size_t n, uint64_t seed, uint64_t capacity, int64_t horizon) {
  Rng rng{seed};
  std::vector<Piece> pieces{{0, capacity, 0, horizon}};
  size_t stuck = 0;
  while (pieces.size() < n && stuck < 100 * n) {
    const size_t i = rng.below(pieces.size());
    const Piece p = pieces[i];
    const bool cut_address = rng.below(2) == 0;
    if (cut_address && p.hi - p.lo > 1) {
      const uint64_t c = p.lo + 1 + rng.below(p.hi - p.lo - 1);
      pieces[i] = {p.lo, c, p.t0, p.t1};
      pieces.push_back({c, p.hi, p.t0, p.t1});
    } else if (!cut_address && p.t1 - p.t0 > 1) {
      const int64_t c = p.t0 + 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(p.t1 - p.t0 - 1)));
      pieces[i] = {p.lo, p.hi, p.t0, c};
      pieces.push_back({p.lo, p.hi, c, p.t1});
    } else {
      ++stuck;
    }
  }
  std::vector<DsaBuffer> out;
  for (size_t k = 0; k < pieces.size(); ++k)
    out.push_back({static_cast<int64_t>(k), pieces[k].t0, pieces[k].t1, pieces[k].hi - pieces[k].lo});
  return out;
}

}  // namespace dlsim
