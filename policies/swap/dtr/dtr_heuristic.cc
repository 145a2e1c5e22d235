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

DtrHeuristic::DtrHeuristic(const RematGraph& rg, DtrHeuristicKind kind, const std::vector<Residency>& where)
    : rg_(rg), kind_(kind), where_(where) {
  const size_t nt = rg.graph().tensors().size();
  parent_.resize(nt);
  for (size_t t = 0; t < nt; ++t) parent_[t] = static_cast<TensorId>(t);
  class_cost_.assign(nt, 0);
  in_class_.assign(nt, 0);
  mark_.assign(nt + static_cast<size_t>(rg.positions()), 0);
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
  ++stamp_;
  const size_t nt = rg_.graph().tensors().size();
  double c = own;
  if (kind_ == DtrHeuristicKind::Eq) {
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
  // Full: walk the off-device ancestors through their producers, then the evicted descendants.
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

void DtrHeuristic::left_device(TensorId t) {
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
  if (kind_ != DtrHeuristicKind::Eq || !in_class_[static_cast<size_t>(t)]) return;
  class_cost_[static_cast<size_t>(find(t))] -= static_cast<double>(rg_.cost(rg_.producer(t)));
}

}  // namespace dlsim
