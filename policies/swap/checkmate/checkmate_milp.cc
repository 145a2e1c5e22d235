#include "policies/swap/checkmate/checkmate_milp.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace dlsim {

namespace {

double in_mib(uint64_t b) { return static_cast<double>(b) / 1048576.0; }

std::string R(int t, int i) { return "R_" + std::to_string(t) + "_" + std::to_string(i); }
std::string S(int t, int v) { return "S_" + std::to_string(t) + "_" + std::to_string(v); }
std::string F(int t, int v, int k) { return "F_" + std::to_string(t) + "_" + std::to_string(v) + "_" + std::to_string(k); }
std::string U(int t, int k) { return "U_" + std::to_string(t) + "_" + std::to_string(k); }
std::string O(int t, int v) { return "O_" + std::to_string(t) + "_" + std::to_string(v); }
std::string I(int t, int v) { return "I_" + std::to_string(t) + "_" + std::to_string(v); }
std::string T(int t) { return "T_" + std::to_string(t); }
constexpr double kCopyTieBreak = 1e-4;  // of each copy's time, in the objective: fewer copies among equal plans

// A linear expression: variables with coefficients, and a constant.
struct Expr {
  std::map<std::string, double> terms;
  double constant = 0;
  void add(const std::string& v, double c) { terms[v] += c; }
};

class Writer {
 public:
  Writer(const RematProblem& p, const CheckmateSwapCosts* swap) : p_(p), swap_(swap) {}
  bool has_r(int t, int i) const {  // R_t_i is a variable (i < t) or the constant 1 (i == t)
    return i == t || p_.can_rerun(i, t);
  }
  bool has_s(int t, int v) const {
    const RematProblem::Value& x = p_.values[static_cast<size_t>(v)];
    return x.maker < t && t < p_.n && t <= x.need;
  }
  // O_t_v: in memory in t and written for the last time, while an op of the order reads it later.
  bool has_o(int t, int v) const {
    const RematProblem::Value& x = p_.values[static_cast<size_t>(v)];
    return swap_ && x.bytes > 0 && !x.users.empty() && x.last_write <= t && t < x.users.back();
  }
  // I_t_v: a copy made in an earlier stage, back in time for an op of the order after t.
  bool has_i(int t, int v) const {
    const RematProblem::Value& x = p_.values[static_cast<size_t>(v)];
    return swap_ && x.bytes > 0 && !x.users.empty() && x.last_write < t && t < x.users.back();
  }
  void o(Expr& e, int t, int v, double c) const {
    if (has_o(t, v)) e.add(O(t, v), c);
  }
  void i(Expr& e, int t, int v, double c) const {
    if (has_i(t, v)) e.add(I(t, v), c);
  }
  void r(Expr& e, int t, int i, double c) const {
    if (i == t) e.constant += c;
    else if (has_r(t, i)) e.add(R(t, i), c);
  }
  void s(Expr& e, int t, int v, double c) const {
    if (has_s(t, v)) e.add(S(t, v), c);
  }
  // lhs (sense) rhs, with the constants moved right.
  void constraint(const Expr& e, const char* sense, double rhs) {
    if (e.terms.empty()) return;  // constant: holds by construction
    out_ << " c" << ++rows_ << ":";
    for (const auto& [v, c] : e.terms)
      if (c != 0) out_ << (c < 0 ? " - " : " + ") << significant(std::abs(c), 10) << ' ' << v;
    out_ << ' ' << sense << ' ' << significant(rhs - e.constant, 10) << '\n';
  }
  std::ostringstream& out() { return out_; }
  int rows() const { return rows_; }

 private:
  const RematProblem& p_;
  const CheckmateSwapCosts* swap_;
  std::ostringstream out_;
  int rows_ = 0;
};

}  // namespace

CheckmateModel checkmate_model(const RematProblem& p, uint64_t budget_bytes, const CheckmateSwapCosts* swap) {
  Writer w(p, swap);
  const int n = p.n;
  const int nv = static_cast<int>(p.values.size());
  std::vector<std::string> binaries, continuous;
  Expr objective;
  double offset_us = 0;
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < t; ++i)
      if (w.has_r(t, i)) {
        if (!swap) objective.add(R(t, i), p.rerun_cost(i, t) / 1000.0);  // us
        binaries.push_back(R(t, i));
      }
  for (int v = 0; v < nv; ++v)
    for (int t = p.values[static_cast<size_t>(v)].maker + 1; t < n; ++t)
      if (w.has_s(t, v)) binaries.push_back(S(t, v));
  if (swap) {
    for (int t = 0; t < n; ++t) {
      objective.add(T(t), 1);
      continuous.push_back(T(t));
      offset_us += p.cost[static_cast<size_t>(t)] / 1000.0;
      for (int v = 0; v < nv; ++v) {
        if (w.has_o(t, v)) {
          binaries.push_back(O(t, v));
          objective.add(O(t, v), kCopyTieBreak * swap->out_us[static_cast<size_t>(v)]);
        }
        if (w.has_i(t, v)) {
          binaries.push_back(I(t, v));
          objective.add(I(t, v), kCopyTieBreak * swap->in_us[static_cast<size_t>(v)]);
        }
      }
    }
  }
  // For each value, the recomputable makers whose in-place followers read it: re-running such a maker reads it.
  std::vector<std::vector<std::pair<int, int>>> via_follower(static_cast<size_t>(nv));  // (maker, follower)
  for (int m = 0; m < n; ++m)
    if (p.recomputable[static_cast<size_t>(m)])
      for (int f : p.followers[static_cast<size_t>(m)])
        for (int v : p.reads[static_cast<size_t>(f)])
          if (p.values[static_cast<size_t>(v)].maker != m) via_follower[static_cast<size_t>(v)].push_back({m, f});

  std::ostringstream head;
  head << "\\ Checkmate MILP: " << n << " stages, " << nv << " values, budget " << budget_bytes << " bytes\nMinimize\n obj:";
  if (objective.terms.empty()) head << " 0 R_none";
  for (const auto& [v, c] : objective.terms) head << " + " << significant(c, 10) << ' ' << v;
  head << "\nSubject To\n";

  for (int t = 0; t < n; ++t) {
    std::vector<int> ks;  // ops that may run in stage t, in order
    for (int k = 0; k <= t; ++k)
      if (w.has_r(t, k)) ks.push_back(k);
    auto reads_of = [&](int j) { return j == t ? p.reads[static_cast<size_t>(j)] : p.rerun_reads(j, t); };
    for (int j : ks)
      for (int v : reads_of(j)) {  // inputs computed in this stage or kept
        Expr e;
        w.r(e, t, j, 1);
        w.r(e, t, p.values[static_cast<size_t>(v)].maker, -1);
        w.s(e, t, v, -1);
        w.constraint(e, "<=", 0);
      }
    for (int v = 0; v < nv; ++v)
      if (w.has_s(t + 1, v) && p.values[static_cast<size_t>(v)].maker < t) {  // only what is in memory is kept
        Expr e;
        w.s(e, t + 1, v, 1);
        w.s(e, t, v, -1);
        w.r(e, t, p.values[static_cast<size_t>(v)].maker, -1);
        w.i(e, t, v, -1);
        w.constraint(e, "<=", 0);
      }
    if (swap) {
      Expr compute, outs, ins;  // the stage's time covers its ops and each direction's copies
      compute.add(T(t), 1);
      compute.constant -= p.cost[static_cast<size_t>(t)] / 1000.0;
      for (int i = 0; i < t; ++i)
        if (w.has_r(t, i)) compute.add(R(t, i), -p.rerun_cost(i, t) / 1000.0);
      w.constraint(compute, ">=", 0);
      outs.add(T(t), 1);
      ins.add(T(t), 1);
      for (int v = 0; v < nv; ++v) {
        const int m = p.values[static_cast<size_t>(v)].maker;
        if (w.has_o(t, v)) {  // copied out of memory it is in
          outs.add(O(t, v), -swap->out_us[static_cast<size_t>(v)]);
          Expr e;
          w.o(e, t, v, 1);
          w.s(e, t, v, -1);
          w.r(e, t, m, -1);
          w.constraint(e, "<=", 0);
        }
        if (w.has_i(t, v)) {  // copied back from a copy made before
          ins.add(I(t, v), -swap->in_us[static_cast<size_t>(v)]);
          Expr e;
          w.i(e, t, v, 1);
          for (int q = m; q < t; ++q) w.o(e, q, v, -1);
          w.constraint(e, "<=", 0);
        }
      }
      if (outs.terms.size() > 1) w.constraint(outs, ">=", 0);
      if (ins.terms.size() > 1) w.constraint(ins, ">=", 0);
    }
    const double room = in_mib(budget_bytes) - in_mib(p.base_bytes[static_cast<size_t>(t)]);
    std::vector<int> prev_freeable;
    for (size_t q = 0; q < ks.size(); ++q) {
      const int k = ks[q];
      Expr u;  // U_t_k - (what is in memory before op k) - (what op k makes) R_t_k = 0
      u.add(U(t, k), 1);
      if (q == 0) {
        for (int v = 0; v < nv; ++v) {
          w.s(u, t, v, -in_mib(p.values[static_cast<size_t>(v)].bytes));
          w.i(u, t, v, -in_mib(p.values[static_cast<size_t>(v)].bytes));  // a copy-in's memory, from the start
        }
      } else {
        u.add(U(t, ks[q - 1]), -1);
        for (int v : prev_freeable)
          if (p.values[static_cast<size_t>(v)].bytes > 0) u.add(F(t, v, ks[q - 1]), in_mib(p.values[static_cast<size_t>(v)].bytes));
      }
      w.r(u, t, k, -in_mib(p.made_bytes(k)));
      w.constraint(u, "=", 0);
      continuous.push_back(U(t, k));
      Expr cap;
      cap.add(U(t, k), 1);
      w.r(cap, t, k, in_mib(p.workspace[static_cast<size_t>(k)]));
      w.constraint(cap, "<=", room);
      // Frees after op k: a value it makes or reads goes exactly when nothing holds it any more.
      std::vector<int> freeable = p.makes[static_cast<size_t>(k)];
      for (int v : reads_of(k)) freeable.push_back(v);
      for (int v : freeable) {
        const RematProblem::Value& x = p.values[static_cast<size_t>(v)];
        if (x.bytes == 0) continue;
        // hazards, each 0 or 1: (1 - R_t_k), S_{t+1}_v, R_t_j of each later op j of stage t that reads v, ...
        std::vector<Expr> hazards(1);
        w.r(hazards[0], t, k, -1);
        hazards[0].constant += 1;
        if (w.has_s(t + 1, v)) w.s(hazards.emplace_back(), t + 1, v, 1);
        if (w.has_o(t, v)) w.o(hazards.emplace_back(), t, v, 1);  // a copy to the host reads it through the stage
        if (k < t && x.maker != k) {
          // Read by a re-run but not made in this stage: the lowering frees what a replay did not make only after
          // an op of the order (program/lower.h), so it goes after a re-run only when the stage made it again.
          Expr& h = hazards.emplace_back();
          h.constant += 1;
          w.r(h, t, x.maker, -1);
        }
        std::vector<int> later;
        for (int j : x.users)
          if (j > k && j <= t && w.has_r(t, j)) later.push_back(j);
        for (const auto& [m, f] : via_follower[static_cast<size_t>(v)])
          if (m > k && f < t && w.has_r(t, m)) later.push_back(m);
        std::sort(later.begin(), later.end());
        later.erase(std::unique(later.begin(), later.end()), later.end());
        for (int j : later) w.r(hazards.emplace_back(), t, j, 1);
        Expr hz;
        for (const Expr& h : hazards) {
          for (const auto& [var, c] : h.terms) hz.add(var, c);
          hz.constant += h.constant;
        }
        const std::string f = F(t, v, k);
        Expr lo = hz;  // F + hazards >= 1
        lo.add(f, 1);
        w.constraint(lo, ">=", 1);
        // F + hazard <= 1 for each hazard, where the paper has one kappa F + hazards <= kappa (kappa the number of
        // hazards, the sum of these): the same plans, a much tighter relaxation (CBC proves a coarse ResNet-152 of 40
        // nodes optimal in seconds with these rows, and not in minutes without).
        binaries.push_back(f);
        for (const Expr& h : hazards) {
          if (h.terms.empty() && h.constant == 0) continue;
          Expr hi = h;
          hi.add(f, 1);
          w.constraint(hi, "<=", 1);
        }
      }
      prev_freeable = std::move(freeable);
    }
  }
  CheckmateModel m;
  std::ostringstream tail;
  tail << "Bounds\n";
  for (const std::string& v : continuous) tail << ' ' << v << " >= 0\n";
  tail << "Binaries\n";
  for (const std::string& v : binaries) tail << ' ' << v << '\n';
  tail << "End\n";
  m.lp = head.str() + w.out().str() + tail.str();
  m.binaries = static_cast<int>(binaries.size());
  m.constraints = w.rows();
  m.objective_offset_us = offset_us;
  for (const std::string& v : binaries)
    if (v[0] == 'O' || v[0] == 'I') m.copy_variables.push_back(v);
  return m;
}

uint64_t keep_all_peak_bytes(const RematProblem& p) {
  // held[t]: the bytes of the values kept into stage t (maker < t <= last user), by a difference array.
  std::vector<int64_t> delta(static_cast<size_t>(p.n) + 1, 0);
  for (const RematProblem::Value& x : p.values) {
    if (x.users.empty() || x.users.back() <= x.maker) continue;
    delta[static_cast<size_t>(x.maker) + 1] += static_cast<int64_t>(x.bytes);
    delta[static_cast<size_t>(x.users.back()) + 1] -= static_cast<int64_t>(x.bytes);
  }
  uint64_t peak = 0;
  int64_t held = 0;
  for (int t = 0; t < p.n; ++t) {
    held += delta[static_cast<size_t>(t)];
    const auto ut = static_cast<size_t>(t);
    peak = std::max(peak, p.base_bytes[ut] + static_cast<uint64_t>(held) + p.made_bytes(t) + p.workspace[ut]);
  }
  return peak;
}

RematSchedule checkmate_schedule(const RematProblem& p, const std::map<std::string, double>& values, double threshold) {
  RematSchedule s;
  const auto n = static_cast<size_t>(p.n);
  s.recompute.assign(n, {});
  s.keep.assign(n, std::vector<char>(p.values.size(), 0));
  auto set = [&](const std::string& v) {
    auto it = values.find(v);
    return it != values.end() && it->second >= threshold;
  };
  for (int t = 0; t < p.n; ++t)
    for (int i = 0; i < t; ++i)
      if (set(R(t, i))) s.recompute[static_cast<size_t>(t)].push_back(i);
  for (size_t v = 0; v < p.values.size(); ++v)
    for (int t = p.values[v].maker + 1; t < p.n; ++t)
      if (set(S(t, static_cast<int>(v)))) s.keep[static_cast<size_t>(t)][v] = 1;
  s.copy_out.assign(n, std::vector<char>(p.values.size(), 0));
  s.copy_in.assign(n, std::vector<char>(p.values.size(), 0));
  for (size_t v = 0; v < p.values.size(); ++v)
    for (int t = p.values[v].maker; t < p.n; ++t) {
      s.copy_out[static_cast<size_t>(t)][v] = set(O(t, static_cast<int>(v)));
      s.copy_in[static_cast<size_t>(t)][v] = set(I(t, static_cast<int>(v)));
    }
  return s;
}

SwapPlan plan_from(const RematProblem& p, const RematSchedule& s) {
  const int n = p.n;
  std::vector<Recomputation> out(static_cast<size_t>(n));
  for (int t = 0; t < n; ++t) {
    out[static_cast<size_t>(t)].before = t;
    std::vector<int> run;  // the stage's re-runs with their in-place followers that ran before t, in issue order
    for (int i : s.recompute[static_cast<size_t>(t)]) {
      run.push_back(i);
      for (int j : p.followers[static_cast<size_t>(i)])
        if (j < t) run.push_back(j);
    }
    std::sort(run.begin(), run.end());
    run.erase(std::unique(run.begin(), run.end()), run.end());
    for (int i : run) out[static_cast<size_t>(t)].ops.push_back(p.op[static_cast<size_t>(i)]);
  }
  SwapPlan plan;
  auto flag = [](const std::vector<std::vector<char>>& m, int t, size_t v) {
    return !m.empty() && m[static_cast<size_t>(t)][v] != 0;
  };
  for (size_t v = 0; v < p.values.size(); ++v) {
    const RematProblem::Value& x = p.values[v];
    if (x.users.empty()) continue;
    auto in_memory = [&](int t) {  // held during stage t
      const auto& r = s.recompute[static_cast<size_t>(t)];
      return s.keep[static_cast<size_t>(t)][v] || std::binary_search(r.begin(), r.end(), x.maker);
    };
    // A value made again in stage t without being kept into t stays (a drop of that stage's recomputation) when op t
    // uses it or it is kept into t+1; otherwise only the stage's re-runs read it, and the replay frees it after them.
    auto stays = [&](int t) {
      return std::binary_search(x.users.begin(), x.users.end(), t) ||
             (t + 1 < n && s.keep[static_cast<size_t>(t) + 1][v]);
    };
    int held = x.maker;        // the last stage after which it was still on the device
    bool on_host = false;      // a copy to the host was made (the values are the same after any re-run)
    for (int t = x.maker; t <= x.users.back(); ++t) {
      bool since_before = t == x.maker;  // on the device at position t-1 already (or made by op t)
      if (t > x.maker && in_memory(t)) {
        const auto& r = s.recompute[static_cast<size_t>(t)];
        const bool remade = std::binary_search(r.begin(), r.end(), x.maker);
        const bool kept = s.keep[static_cast<size_t>(t)][v] != 0;
        // Not kept into t but made again in t: freed at the end of stage t-1 even when t-1 held it, so that the
        // replay before op t runs without it (the MILP counts it so: random graphs found the lowering keeping it).
        if (held == t - 1 && kept) {
          held = t;
          since_before = true;
        } else if (kept && !remade && on_host && flag(s.copy_in, t - 1, v)) {
          // Back from the host: memory from the start of stage t-1, the op of stage t waits for the copy.
          plan.actions.push_back({x.tensor, held, std::max(held, t - 2), t, held, false});
          held = t;
        } else if (remade && stays(t)) {
          out[static_cast<size_t>(t)].drops.push_back({x.tensor, held});  // gone after `held`, made again here
          held = t;
        }
      }
      if (!on_host && flag(s.copy_out, t, v) && held == t) {
        // During stage t: after op t-1 when it was there, else after op t (its re-make runs right before op t).
        plan.copies.push_back({x.tensor, std::max(x.last_write, since_before ? t - 1 : t), true});
        on_host = true;
      }
    }
  }
  for (Recomputation& r : out)
    if (!r.ops.empty()) plan.recomputations.push_back(std::move(r));
  return plan;
}

}  // namespace dlsim
