#include "validate/calibrate/torch_profile/profile_steps.h"

#include <algorithm>
#include <map>

#include "common/config_error.h"

namespace dlsim {
namespace {

constexpr char kStepsAutogradPrefix[] = "autograd::engine::evaluate_function: ";

bool steps_within(const ProfileEvent& outer, const ProfileEvent& inner) {
  return inner.ts_us >= outer.ts_us && inner.end_us() <= outer.end_us();
}

bool steps_is_sync_call(const std::string& name) {
  return name == "cudaDeviceSynchronize" || name == "cudaStreamSynchronize" || name == "cudaEventSynchronize" ||
         name == "cuStreamSynchronize" || name == "cuCtxSynchronize" || name == "cudaMemcpy";
}

// Per thread, its cpu_ops with the top-level ones marked, and for each top-level op its direct children.
struct StepsThreadOps {
  std::vector<size_t> top;                          // event indices, time order
  std::map<size_t, std::vector<size_t>> children;   // top-level event -> its direct children
};

std::map<std::string, StepsThreadOps> steps_nesting(const ProfilerTrace& t) {
  std::map<std::string, std::vector<size_t>> by_thread;
  for (size_t i = 0; i < t.events.size(); ++i)
    if (t.events[i].kind == ProfileEventKind::CpuOp) by_thread[t.events[i].tid].push_back(i);
  std::map<std::string, StepsThreadOps> out;
  for (auto& [tid, ids] : by_thread) {
    // Parents first: earlier start, then the longer span, then file order (deterministic for equal spans).
    std::sort(ids.begin(), ids.end(), [&](size_t a, size_t b) {
      const ProfileEvent &x = t.events[a], &y = t.events[b];
      if (x.ts_us != y.ts_us) return x.ts_us < y.ts_us;
      if (x.dur_us != y.dur_us) return x.dur_us > y.dur_us;
      return a < b;
    });
    StepsThreadOps& ops = out[tid];
    std::vector<size_t> stack;
    for (size_t i : ids) {
      while (!stack.empty() && !steps_within(t.events[stack.back()], t.events[i])) stack.pop_back();
      if (stack.empty()) ops.top.push_back(i);
      else if (stack.size() == 1) ops.children[stack.front()].push_back(i);
      stack.push_back(i);
    }
  }
  return out;
}

}  // namespace

bool is_autograd_node(const ProfileEvent& e) {
  return e.kind == ProfileEventKind::CpuOp && e.name.rfind(kStepsAutogradPrefix, 0) == 0;
}
std::string autograd_node_name(const ProfileEvent& e) {
  return is_autograd_node(e) ? e.name.substr(sizeof(kStepsAutogradPrefix) - 1) : e.name;
}
bool is_accumulate_grad(const ProfileEvent& e) {
  return is_autograd_node(e) && autograd_node_name(e).find("AccumulateGrad") != std::string::npos;
}

std::vector<ProfileStep> profile_steps(const ProfilerTrace& t) {
  const auto nesting = steps_nesting(t);
  std::vector<ProfileStep> steps;
  for (const ProfileEvent& e : t.events)
    if (e.kind == ProfileEventKind::Annotation && e.name.rfind("ProfilerStep#", 0) == 0) {
      ProfileStep s;
      s.name = e.name;
      s.start_us = e.ts_us;
      s.end_us = e.end_us();
      s.main_thread = e.tid;
      steps.push_back(s);
    }
  if (steps.empty()) {  // the whole trace, its Python thread the one of the first host op
    ProfileStep s;
    s.name = "whole trace";
    bool any = false;
    for (const ProfileEvent& e : t.events) {
      if (e.kind != ProfileEventKind::CpuOp) continue;
      if (!any || e.ts_us < s.start_us) s.start_us = e.ts_us, s.main_thread = e.tid;
      s.end_us = any ? std::max(s.end_us, e.end_us()) : e.end_us();
      any = true;
    }
    steps.push_back(s);
  }
  std::sort(steps.begin(), steps.end(), [](const ProfileStep& a, const ProfileStep& b) {
    return a.start_us < b.start_us;
  });

  // Kernels by the correlation id of their launch.
  std::map<int64_t, std::vector<double>> kernels_of_launch;  // correlation -> each kernel's µs
  for (const ProfileEvent& e : t.events)
    if (e.kind == ProfileEventKind::Kernel && e.correlation) kernels_of_launch[*e.correlation].push_back(e.dur_us);
  // Launches per thread, in time order, to find those inside a top-level op.
  std::map<std::string, std::vector<const ProfileEvent*>> runtime_by_thread;
  for (const ProfileEvent& e : t.events)
    if (e.kind == ProfileEventKind::Runtime) runtime_by_thread[e.tid].push_back(&e);
  for (auto& [tid, v] : runtime_by_thread)
    std::stable_sort(v.begin(), v.end(),
                     [](const ProfileEvent* a, const ProfileEvent* b) { return a->ts_us < b->ts_us; });

  auto host_op = [&](const std::string& tid, size_t i) {
    ProfileHostOp op;
    op.event = i;
    const ProfileEvent& e = t.events[i];
    if (is_autograd_node(e)) {
      auto c = nesting.at(tid).children.find(i);
      if (c != nesting.at(tid).children.end())
        for (size_t k : c->second)
          if (t.events[k].name == "aten::add_" || t.events[k].name == "aten::add") {
            ++op.grad_sums;
            op.grad_sum_us += t.events[k].dur_us;
          }
    }
    auto r = runtime_by_thread.find(tid);
    if (r != runtime_by_thread.end())
      for (auto it = std::lower_bound(r->second.begin(), r->second.end(), e.ts_us,
                                      [](const ProfileEvent* l, double ts) { return l->ts_us < ts; });
           it != r->second.end(); ++it) {
        const ProfileEvent* l = *it;
        if (l->ts_us > e.end_us()) break;
        if (!steps_within(e, *l) || !l->correlation) continue;
        auto k = kernels_of_launch.find(*l->correlation);
        if (k == kernels_of_launch.end()) continue;
        double launch_us = 0;  // summed per launch first, as the op's total always was
        for (double us : k->second) launch_us += us;
        op.kernels += static_cast<int64_t>(k->second.size());
        op.kernel_us += launch_us;
        op.kernel_each_us.insert(op.kernel_each_us.end(), k->second.begin(), k->second.end());
      }
    return op;
  };

  for (ProfileStep& s : steps) {
    for (const ProfileEvent& e : t.events) {
      if (e.kind == ProfileEventKind::Annotation && e.tid == s.main_thread && e.ts_us >= s.start_us &&
          e.end_us() <= s.end_us) {
        if (e.name.rfind("Optimizer.step#", 0) == 0 && !s.optimizer) s.optimizer = &e;
        if (e.name.rfind("Optimizer.zero_grad#", 0) == 0 && !s.zero_grad) s.zero_grad = &e;
      }
      if (e.kind == ProfileEventKind::Runtime && e.tid == s.main_thread && steps_is_sync_call(e.name) &&
          e.ts_us >= s.start_us && e.end_us() <= s.end_us)
        s.sync_wait_us += e.dur_us;
    }
    // Autograd's nodes, on whichever thread ran them.
    double first_node = s.end_us;
    for (const auto& [tid, ops] : nesting)
      for (size_t i : ops.top) {
        const ProfileEvent& e = t.events[i];
        if (!is_autograd_node(e) || e.ts_us < s.start_us || e.ts_us >= s.end_us) continue;
        s.backward.push_back(host_op(tid, i));
        first_node = std::min(first_node, e.ts_us);
      }
    std::stable_sort(s.backward.begin(), s.backward.end(), [&](const ProfileHostOp& a, const ProfileHostOp& b) {
      return t.events[a.event].ts_us < t.events[b.event].ts_us;
    });
    auto inside = [](const ProfileEvent* span, const ProfileEvent& e) { return span && steps_within(*span, e); };
    auto it = nesting.find(s.main_thread);
    if (it == nesting.end()) throw ConfigError(t.file, 0, "traceEvents", s.name + " holds no host op");
    for (size_t i : it->second.top) {
      const ProfileEvent& e = t.events[i];
      if (e.ts_us < s.start_us || e.ts_us >= s.end_us || is_autograd_node(e)) continue;
      if (inside(s.optimizer, e)) s.optimizer_ops.push_back(host_op(s.main_thread, i));
      else if (inside(s.zero_grad, e)) continue;  // set_to_none: Python only; its ops are not priced
      else if (e.ts_us < first_node) s.forward.push_back(host_op(s.main_thread, i));
      else s.other.push_back(host_op(s.main_thread, i));
    }
    // loss.backward()'s seed gradient: the last op before autograd's first node.
    if (!s.forward.empty() && t.events[s.forward.back().event].name == "aten::ones_like" && !s.backward.empty()) {
      s.seed = &t.events[s.forward.back().event];
      s.forward.pop_back();
    }
    if (s.forward.empty() && s.backward.empty() && s.optimizer_ops.empty())
      throw ConfigError(t.file, 0, "traceEvents", s.name + " holds no host op");
  }
  return steps;
}

}  // namespace dlsim
