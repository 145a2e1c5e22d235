#include "policies/swap/dtr/dtr_heuristic.h"

#include <algorithm>

namespace dlsim {

const char* to_string(DtrHeuristicKind k) {
  switch (k) {
    case DtrHeuristicKind::Full: return "full";
    case DtrHeuristicKind::Eq: return "eq";
    case DtrHeuristicKind::Local: return "local";
  }
  return "?";
}

DtrHeuristic::DtrHeuristic(const RematGraph& rg, DtrHeuristicKind kind, const std::vector<Residency>& where,
                           bool cache_full)
    : rg_(rg), kind_(kind), where_(where), cache_full_(cache_full && kind == DtrHeuristicKind::Full) {
  const size_t nt = rg.graph().tensors().size();
  parent_.resize(nt);
  for (size_t t = 0; t < nt; ++t) parent_[t] = static_cast<TensorId>(t);
  class_cost_.assign(nt, 0);
  in_class_.assign(nt, 0);
  mark_.assign(nt + static_cast<size_t>(rg.positions()), 0);
  if (cache_full_) {
    full_score_.assign(nt, 0);
    full_valid_.assign(nt, 0);
    invalidate_mark_.assign(nt, 0);
  }
}

bool DtrHeuristic::off(TensorId t) const {
  const Residency r = where_[static_cast<size_t>(t)];
  return r == Residency::Evicted || r == Residency::Dead;
}

TensorId DtrHeuristic::find(TensorId t) {
  while (parent_[static_cast<size_t>(t)] != t) {
    const TensorId up = parent_[static_cast<size_t>(parent_[static_cast<size_t>(t)])];
    parent_[static_cast<size_t>(t)] = up;  // path halving
    t = up;
  }
  return t;
}

double DtrHeuristic::cost(TensorId t) {
  const int w = rg_.producer(t);
  const double own = static_cast<double>(rg_.cost(w));
  if (kind_ == DtrHeuristicKind::Local) return own;
  if (kind_ == DtrHeuristicKind::Eq) {
    ++stamp_;
    double c = own;
    auto add_root = [&](TensorId v) {
      const TensorId r = find(v);
      if (mark_[static_cast<size_t>(r)] == stamp_) return;
      mark_[static_cast<size_t>(r)] = stamp_;
      c += std::max(0.0, class_cost_[static_cast<size_t>(r)]);
    };
    for (TensorId v : rg_.op_at(w).inputs)
      if (in_class_[static_cast<size_t>(v)] && off(v)) add_root(v);
    for (TensorId v : rg_.children(t))
      if (in_class_[static_cast<size_t>(v)] && where_[static_cast<size_t>(v)] == Residency::Evicted) add_root(v);
    return c;
  }
  if (!cache_full_) return full_cost(t);
  const auto ti = static_cast<size_t>(t);
  if (!full_valid_[ti]) {
    full_score_[ti] = full_cost(t);
    full_valid_[ti] = 1;
  }
  return full_score_[ti];
}

double DtrHeuristic::full_cost(TensorId t) {
  // Walk the off-device ancestors through their producers, then the evicted descendants.
  const int w = rg_.producer(t);
  double c = static_cast<double>(rg_.cost(w));
  const size_t nt = rg_.graph().tensors().size();
  ++stamp_;
  mark_[nt + static_cast<size_t>(w)] = stamp_;
  auto visit = [&](TensorId v) {
    if (mark_[static_cast<size_t>(v)] == stamp_) return;
    mark_[static_cast<size_t>(v)] = stamp_;
    stack_.push_back(v);
    const int p = rg_.producer(v);
    if (mark_[nt + static_cast<size_t>(p)] != stamp_) {
      mark_[nt + static_cast<size_t>(p)] = stamp_;
      c += static_cast<double>(rg_.cost(p));
    }
  };
  stack_.clear();
  stack_.push_back(t);
  while (!stack_.empty()) {
    const TensorId u = stack_.back();
    stack_.pop_back();
    for (TensorId v : rg_.op_at(rg_.producer(u)).inputs)
      if (!rg_.persistent(v) && off(v) && rg_.producer(v) >= 0) visit(v);
  }
  stack_.push_back(t);
  while (!stack_.empty()) {
    const TensorId u = stack_.back();
    stack_.pop_back();
    for (TensorId v : rg_.children(u))
      if (where_[static_cast<size_t>(v)] == Residency::Evicted) visit(v);
  }
  return c;
}

// A walk from t looks at x when x is an input of the producer of t or of an off-device ancestor it passed (the
// upward walk), or a child of t or of an evicted descendant it passed (the downward walk). Walked backwards from
// x: up through children that are off the device (and passable: transient, with a producer), and down through
// parents that are evicted; the resident tensors met are the scores to walk again. A superset is harmless.
void DtrHeuristic::invalidate_around(TensorId x) {
  ++invalidate_stamp_;
  auto seen = [&](TensorId v) {
    if (invalidate_mark_[static_cast<size_t>(v)] == invalidate_stamp_) return true;
    invalidate_mark_[static_cast<size_t>(v)] = invalidate_stamp_;
    return false;
  };
  full_valid_[static_cast<size_t>(x)] = 0;
  stack_.clear();
  stack_.push_back(x);
  seen(x);
  while (!stack_.empty()) {  // tensors whose upward walk reaches x
    const TensorId u = stack_.back();
    stack_.pop_back();
    for (TensorId c : rg_.children(u)) {
      if (seen(c)) continue;
      if (where_[static_cast<size_t>(c)] == Residency::Resident) full_valid_[static_cast<size_t>(c)] = 0;
      else if (off(c) && !rg_.persistent(c) && rg_.producer(c) >= 0) stack_.push_back(c);
    }
  }
  ++invalidate_stamp_;
  stack_.push_back(x);
  seen(x);
  while (!stack_.empty()) {  // tensors whose downward walk reaches x
    const TensorId u = stack_.back();
    stack_.pop_back();
    const int p = rg_.producer(u);
    if (p < 0) continue;
    for (TensorId v : rg_.op_at(p).inputs) {
      if (seen(v)) continue;
      if (where_[static_cast<size_t>(v)] == Residency::Resident) full_valid_[static_cast<size_t>(v)] = 0;
      else if (where_[static_cast<size_t>(v)] == Residency::Evicted) stack_.push_back(v);
    }
  }
}

void DtrHeuristic::left_device(TensorId t) {
  if (cache_full_) invalidate_around(t);
  if (kind_ != DtrHeuristicKind::Eq || rg_.producer(t) < 0) return;
  const double own = static_cast<double>(rg_.cost(rg_.producer(t)));
  in_class_[static_cast<size_t>(t)] = 1;
  class_cost_[static_cast<size_t>(find(t))] += own;
  auto join = [&](TensorId v) {
    const TensorId a = find(t), b = find(v);
    if (a == b) return;
    parent_[static_cast<size_t>(b)] = a;
    class_cost_[static_cast<size_t>(a)] += class_cost_[static_cast<size_t>(b)];
  };
  for (TensorId v : rg_.op_at(rg_.producer(t)).inputs)
    if (in_class_[static_cast<size_t>(v)] && off(v)) join(v);
  for (TensorId v : rg_.children(t))
    if (in_class_[static_cast<size_t>(v)] && off(v)) join(v);
}

void DtrHeuristic::recomputed(TensorId t) {
  if (cache_full_) invalidate_around(t);
  if (kind_ != DtrHeuristicKind::Eq || !in_class_[static_cast<size_t>(t)]) return;
  class_cost_[static_cast<size_t>(find(t))] -= static_cast<double>(rg_.cost(rg_.producer(t)));
}

}  // namespace dlsim
