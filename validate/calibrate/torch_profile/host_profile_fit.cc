#include "validate/calibrate/torch_profile/host_profile_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/config_error.h"

namespace dlsim {
namespace {

const char* const kHostClassNames[] = {"conv", "matmul", "norm", "elementwise", "view"};

// The slot of a key's value in the spec (ns).
TimeNs* host_key_slot(EagerHostSpec& s, const std::string& key) {
  for (size_t c = 0; c < kHostOpClasses; ++c) {
    if (key == std::string("forward_us.") + kHostClassNames[c]) return &s.forward_ns[c];
    if (key == std::string("backward_us.") + kHostClassNames[c]) return &s.backward_ns[c];
  }
  if (key == "extra_kernel_us") return &s.extra_kernel_ns;
  if (key == "grad_accumulate_us") return &s.grad_accumulate_ns;
  if (key == "param_grad_us") return &s.param_grad_ns;
  if (key == "backward_start_us") return &s.backward_start_ns;
  if (key == "optimizer_step_us") return &s.optimizer_step_ns;
  if (key == "optimizer_tensor_us") return &s.optimizer_tensor_ns;
  return nullptr;
}

// The mean: the samples' total over their count, as fit_host_model.py pools total time over total calls, so that
// the costs keep the traces' total host time and the scale stands only for what no op holds (the Python between
// the ops, the profiler's overhead). A median would drop the large layers' time into the scale, which then
// inflates every other key (on a CPU trace, whose convolutions run their arithmetic inside the op, by 2x).
double host_fit_mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

// 0.01 µs, as the file holds values.
TimeNs host_fit_ns(double us) { return static_cast<TimeNs>(std::llround(std::round(us * 100.0) * 10.0)); }

// dlsim's host time for one iteration of `g` under `s`: every op's issue charge and the once-per-step charges.
double host_fit_step_us(const EagerHostSpec& s, const Graph& g) {
  const EagerHostCharges c = eager_host_charges(s, g);
  TimeNs ns = 0;
  for (size_t i = 0; i < c.issue_ns.size(); ++i) ns += c.issue_ns[i] + c.once_ns[i];
  return static_cast<double>(ns) / 1e3;
}

std::string host_class_key(const char* group, OpKind k) {
  return std::string(group) + "." + to_string(host_op_class(k));
}

}  // namespace

const std::vector<std::string>& eager_host_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const char* g : {"forward_us", "backward_us"})
      for (const char* c : kHostClassNames) k.push_back(std::string(g) + "." + c);
    for (const char* x : {"extra_kernel_us", "grad_accumulate_us", "param_grad_us", "backward_start_us",
                          "optimizer_step_us", "optimizer_tensor_us"})
      k.push_back(x);
    return k;
  }();
  return keys;
}

double eager_host_key_us(const EagerHostSpec& s, const std::string& key) {
  EagerHostSpec copy = s;
  return static_cast<double>(*host_key_slot(copy, key)) / 1e3;
}

HostProfileFit fit_host_from_profiles(const std::vector<MatchedProfile>& profiles, const EagerHostSpec* base) {
  const std::string file = profiles.empty() ? "<no trace>" : profiles.front().trace->file;
  std::map<std::string, std::vector<double>> samples;
  // First pass: everything but the backward classes, which need extra_kernel_us.
  for (const MatchedProfile& p : profiles) {
    const ProfilerTrace& t = *p.trace;
    const Graph& g = *p.graph;
    int64_t params = 0;
    for (const Tensor& x : g.tensors()) params += x.learnable ? 1 : 0;
    for (size_t si = 0; si < p.steps.size(); ++si) {
      const ProfileStep& s = p.steps[si];
      const StepMatch& m = p.matches[si];
      for (const MatchedForwardOp& f : m.forward) {
        samples[host_class_key("forward_us", g.op(f.graph_op).kind)].push_back(t.events[f.host->event].dur_us);
        if (f.bn_counter) samples["forward_us.elementwise"].push_back(t.events[f.bn_counter->event].dur_us);
      }
      for (const ProfileHostOp& h : s.backward)
        for (int64_t k = 0; k < h.grad_sums; ++k)
          samples["grad_accumulate_us"].push_back(h.grad_sum_us / static_cast<double>(h.grad_sums));
      for (const ProfileHostOp* h : m.accumulate_grad) samples["param_grad_us"].push_back(t.events[h->event].dur_us);
      if (s.seed && !s.backward.empty())
        samples["backward_start_us"].push_back(t.events[s.backward.front().event].ts_us - s.seed->ts_us);
      if (s.optimizer && params > 0) {
        double ops_us = 0;
        for (const ProfileHostOp& h : s.optimizer_ops) ops_us += t.events[h.event].dur_us;
        samples["optimizer_step_us"].push_back(std::max(0.0, s.optimizer->dur_us - ops_us));
        samples["optimizer_tensor_us"].push_back(ops_us / static_cast<double>(params));
      }
    }
  }
  if (samples.count("grad_accumulate_us")) samples["extra_kernel_us"] = samples["grad_accumulate_us"];
  const double extra_us = samples.count("extra_kernel_us") ? host_fit_mean(samples["extra_kernel_us"])
                          : base ? static_cast<double>(base->extra_kernel_ns) / 1e3 : 0.0;
  for (const MatchedProfile& p : profiles) {
    const Graph& g = *p.graph;
    std::vector<int64_t> backward_ops(g.ops().size(), 0);  // per forward op: its backward ops in the graph
    for (const Op& op : g.ops())
      if (op.phase == Phase::Backward && op.forward_op >= 0 && op.kind != OpKind::GradAccumulate)
        ++backward_ops[static_cast<size_t>(op.forward_op)];
    for (const StepMatch& m : p.matches)
      for (const MatchedForwardOp& f : m.forward) {
        const int64_t n = backward_ops[static_cast<size_t>(f.graph_op)];
        if (f.nodes.empty() || n == 0) continue;  // no node, or the graph charges no backward for it
        double us = 0;
        for (const ProfileHostOp* h : f.nodes) us += p.trace->events[h->event].dur_us - h->grad_sum_us;
        samples[host_class_key("backward_us", g.op(f.graph_op).kind)].push_back(
            std::max(0.0, us - static_cast<double>(n - 1) * extra_us));
      }
  }

  HostProfileFit out;
  std::map<std::string, double> raw;  // µs at the profiled size, for the keys the scale applies to
  for (const std::string& k : eager_host_keys()) {
    HostKeyFit& f = out.keys[k];
    auto it = samples.find(k);
    if (it != samples.end() && !it->second.empty()) {
      f.samples = it->second.size();
      f.profiled_us = host_fit_mean(it->second);
      f.source = "fitted";
      raw[k] = f.profiled_us;
    } else if (base) {
      f.source = "kept from the --hw file";
      f.fitted_us = eager_host_key_us(*base, k);
    }
  }
  // Stand-ins where no trace measured a key and the --hw file has no section.
  auto stand_in = [&](const std::string& k, const std::string& from) {
    if (out.keys[k].source.empty() && raw.count(from)) {
      raw[k] = raw[from];
      out.keys[k].profiled_us = raw[from];
      out.keys[k].source = "stand-in: " + from;
    }
  };
  for (const char* c : kHostClassNames) stand_in(std::string("forward_us.") + c, "forward_us.elementwise");
  for (const char* c : kHostClassNames) stand_in(std::string("backward_us.") + c, std::string("forward_us.") + c);
  stand_in("grad_accumulate_us", "backward_us.elementwise");
  stand_in("extra_kernel_us", "grad_accumulate_us");
  std::vector<std::string> missing;
  for (const auto& [k, f] : out.keys)
    if (f.source.empty()) missing.push_back(k);
  if (!missing.empty()) {
    std::string list;
    for (const std::string& k : missing) list += (list.empty() ? "" : ", ") + k;
    throw ConfigError(file, 0, "traceEvents",
                      "the traces measure nothing for host_cpu.pytorch_eager's " + list +
                          ", and the --hw file has no pytorch_eager section to keep them from (start from one that "
                          "has: configs/hw/*-pytorch.yaml)");
  }

  // The scale: dlsim's host time per step, the fitted keys times s plus the kept ones, equals the measured host time.
  EagerHostSpec fit_part{}, kept_part{};
  for (const auto& [k, f] : out.keys) {
    if (raw.count(k)) *host_key_slot(fit_part, k) = std::llround(raw[k] * 1e3);
    else *host_key_slot(kept_part, k) = host_fit_ns(f.fitted_us);
  }
  double target = 0, profiled = 0, predicted_fit = 0, predicted_kept = 0;
  out.overhead_measured = !profiles.empty();
  for (const MatchedProfile& p : profiles) {
    double spans = 0;
    for (const ProfileStep& s : p.steps) spans += s.span_us();
    const double mean_span = p.steps.empty() ? 0 : spans / static_cast<double>(p.steps.size());
    const double factor =
        p.trace->unprofiled_step_us > 0 && mean_span > 0 ? p.trace->unprofiled_step_us / mean_span : 1;
    out.overhead_measured = out.overhead_measured && p.trace->unprofiled_step_us > 0;
    const double step_fit = host_fit_step_us(fit_part, *p.graph), step_kept = host_fit_step_us(kept_part, *p.graph);
    for (const ProfileStep& s : p.steps) {
      const double host = std::max(0.0, s.span_us() - s.sync_wait_us);
      profiled += host;
      target += host * factor;
      predicted_fit += step_fit;
      predicted_kept += step_kept;
      ++out.steps;
    }
  }
  if (!(predicted_fit > 0) || !(target > predicted_kept))
    throw ConfigError(file, 0, "traceEvents",
                      "the profiled steps' host time does not exceed what the kept host costs already charge: no "
                      "positive scale fits the measured costs");
  out.scale = (target - predicted_kept) / predicted_fit;
  out.spec = kept_part;
  for (auto& [k, f] : out.keys)
    if (raw.count(k)) {
      *host_key_slot(out.spec, k) = host_fit_ns(out.scale * raw[k]);
      f.fitted_us = static_cast<double>(*host_key_slot(out.spec, k)) / 1e3;
    }
  const double n = static_cast<double>(std::max<size_t>(1, out.steps));
  out.profiled_host_us = profiled / n;
  out.target_host_us = target / n;
  out.overhead_factor = profiled > 0 ? target / profiled : 1;
  double predicted = 0;
  for (const MatchedProfile& p : profiles) {
    const double step_us = host_fit_step_us(out.spec, *p.graph);
    predicted += step_us * static_cast<double>(p.steps.size());
    double spans = 0, host = 0;
    for (const ProfileStep& s : p.steps) spans += s.span_us(), host += std::max(0.0, s.span_us() - s.sync_wait_us);
    const double factor = p.trace->unprofiled_step_us > 0 && spans > 0
                              ? p.trace->unprofiled_step_us * static_cast<double>(p.steps.size()) / spans : 1;
    out.per_trace.push_back({host * factor / static_cast<double>(std::max<size_t>(1, p.steps.size())), step_us});
  }
  out.predicted_host_us = predicted / n;
  return out;
}

std::string eager_host_section_yaml(const EagerHostSpec& s) {
  std::string out = "  pytorch_eager:\n";
  auto value = [&](const std::string& key) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", eager_host_key_us(s, key));
    return std::string(buf);
  };
  for (const char* g : {"forward_us", "backward_us"}) {
    out += std::string("    ") + g + ":\n";
    for (const char* c : kHostClassNames)
      out += std::string("      ") + c + ": " + value(std::string(g) + "." + c) + "\n";
  }
  for (const std::string& k : eager_host_keys())
    if (k.find('.') == std::string::npos) out += "    " + k + ": " + value(k) + "\n";
  return out;
}

}  // namespace dlsim
