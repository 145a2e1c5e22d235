#include "policies/swap/checkmate/checkmate_rounding.h"

#include <algorithm>
#include <vector>

namespace dlsim {

namespace {

// The paper's rounding at `theta`: values of ops that cannot be re-run through their need are kept.
RematSchedule round_relaxation(const RematProblem& p, const std::map<std::string, double>& lp, double theta) {
  const auto n = static_cast<size_t>(p.n);
  const size_t nv = p.values.size();
  const RematSchedule frac = checkmate_schedule(p, lp, theta);
  RematSchedule s;
  s.recompute.assign(n, {});
  s.keep.assign(n, std::vector<char>(nv, 0));
  std::vector<char> held_prev(nv, 0);  // in memory during stage t-1
  for (size_t t = 0; t < n; ++t) {
    for (size_t v = 0; v < nv; ++v) {
      const RematProblem::Value& x = p.values[v];
      const bool can = held_prev[v] && x.maker < static_cast<int>(t) && x.need >= static_cast<int>(t);
      // A value whose maker cannot be re-run through the end of its need (an input rewritten by then) stays.
      s.keep[t][v] = can && (frac.keep[t][v] || !p.can_rerun(x.maker, std::max(x.need, static_cast<int>(t))));
    }
    std::vector<char> run(n, 0);
    run[t] = 1;
    for (size_t j = t + 1; j-- > 0;) {  // descending: an op's inputs come before it
      if (!run[j]) continue;
      for (int v : j == t ? p.reads[j] : p.rerun_reads(static_cast<int>(j), static_cast<int>(t)))
        if (!s.keep[t][static_cast<size_t>(v)]) run[static_cast<size_t>(p.values[static_cast<size_t>(v)].maker)] = 1;
    }
    for (size_t i = 0; i < t; ++i)
      if (run[i]) s.recompute[t].push_back(static_cast<int>(i));
    for (size_t v = 0; v < nv; ++v) held_prev[v] = s.keep[t][v] || run[static_cast<size_t>(p.values[v].maker)];
  }
  return s;
}

}  // namespace

double rerun_ns(const RematProblem& p, const RematSchedule& s) {
  double ns = 0;
  for (size_t t = 0; t < s.recompute.size(); ++t)
    for (int i : s.recompute[t]) ns += p.rerun_cost(i, static_cast<int>(t));
  return ns;
}

RoundedPlan round_relaxation_best(const RematProblem& p, const std::map<std::string, double>& lp, uint64_t budget,
                                  const std::function<std::pair<SwapPlan, uint64_t>(const RematSchedule&)>& lower) {
  RoundedPlan best;
  double best_cost = 0;
  bool have = false;
  for (double theta : {0.5, 0.6, 0.7, 0.8, 0.9, 0.99, 1.01}) {
    RematSchedule cand = round_relaxation(p, lp, theta);
    auto [plan, peak] = lower(cand);
    const double cost = rerun_ns(p, cand);
    const bool fits = peak <= budget;
    if (!have || (fits && (!best.fits || cost < best_cost)) || (!fits && !best.fits && peak < best.peak_bytes)) {
      have = true;
      best_cost = cost;
      best = {std::move(cand), std::move(plan), theta, peak, fits};
    }
  }
  return best;
}

}  // namespace dlsim
