#include "validate/calibrate/calibrate.h"
#include "common/byte_units.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "common/config_error.h"
#include "hw/batch_signature.h"
#include "hw/op_signature.h"
#include "hw/roofline.h"

namespace dlsim {

namespace {
constexpr double kGB = 1e9;
}  // namespace

LinearFit least_squares(const std::vector<std::pair<double, double>>& xy) {
  LinearFit f;
  f.n = xy.size();
  if (xy.empty()) return f;
  double mx = 0, my = 0;
  for (const auto& [x, y] : xy) mx += x, my += y;
  mx /= static_cast<double>(xy.size());
  my /= static_cast<double>(xy.size());
  double sxx = 0, sxy = 0;
  for (const auto& [x, y] : xy) sxx += (x - mx) * (x - mx), sxy += (x - mx) * (y - my);
  f.slope = sxx > 0 ? sxy / sxx : 0;
  f.intercept = my - f.slope * mx;
  return f;
}

LinearFit least_squares_relative(const std::vector<std::pair<double, double>>& xy) {
  LinearFit f;
  f.n = xy.size();
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : xy) {
    if (!(y > 0)) continue;
    const double w = 1.0 / (y * y);
    sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
  }
  if (sw == 0) return f;
  const double det = sw * sxx - sx * sx;
  if (det > 0) {
    f.slope = (sw * sxy - sx * sy) / det;
    f.intercept = (sy - f.slope * sx) / sw;
  } else {
    f.intercept = sy / sw;
  }
  return f;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

MicrobenchFit fit_microbench(const MicrobenchResults& r, const std::string& file) {
  MicrobenchFit out;
  for (CopyDir dir : {CopyDir::HostToDevice, CopyDir::DeviceToHost}) {
    const char* name = dir == CopyDir::HostToDevice ? "h2d" : "d2h";
    for (bool pinned : {true, false}) {
      std::vector<std::pair<double, double>> xy;
      for (const CopySample& c : r.copies)
        if (c.dir == dir && c.pinned == pinned && !c.bidirectional) xy.push_back({static_cast<double>(c.bytes), c.ns});
      const std::string key = std::string("copies.") + name + (pinned ? ".pinned" : ".pageable");
      if (xy.size() < 2) throw ConfigError(file, 0, key, "need at least two sizes to fit latency and bandwidth");
      const LinearFit f = least_squares_relative(xy);
      if (!(f.slope > 0)) throw ConfigError(file, 0, key, "time does not grow with size: no bandwidth to fit");
      out.copies[{dir, pinned}] = {std::max(0.0, f.intercept), 1e9 / f.slope, f.n};
    }
    std::vector<std::pair<double, double>> both;
    for (const CopySample& c : r.copies)
      if (c.dir == dir && c.pinned && c.bidirectional) both.push_back({static_cast<double>(c.bytes), c.ns});
    if (both.size() >= 2) {
      const LinearFit f = least_squares_relative(both);
      if (f.slope > 0) out.bidirectional_bandwidth[dir] = 1e9 / f.slope;
    }
  }
  std::vector<std::pair<double, double>> m, fr;
  for (const AllocSample& a : r.allocs) (a.is_free ? fr : m).push_back({static_cast<double>(a.bytes) / static_cast<double>(kGiB), a.ns});
  if (m.size() < 2) throw ConfigError(file, 0, "allocs", "need cudaMalloc times for at least two sizes");
  if (fr.size() < 2) throw ConfigError(file, 0, "allocs", "need cudaFree times for at least two sizes");
  out.malloc_ns_vs_gib = least_squares(m);
  out.free_ns_vs_gib = least_squares(fr);
  if (!(r.launch_overhead_ns > 0)) throw ConfigError(file, 0, "launch_overhead_ns", "must be positive");
  out.launch_overhead_ns = r.launch_overhead_ns;
  return out;
}

KernelTimeFit fit_kernel_times(const std::vector<std::pair<const Graph*, const Trace*>>& runs) {
  std::map<std::string, std::vector<double>> d;
  KernelTimeFit k;
  for (const auto& [g, t] : runs) {
    std::vector<std::string> sig(g->ops().size());  // signatures computed once per op
    for (const OpRecord& r : t->ops) {
      if (r.iteration < 0 || r.op < 0 || static_cast<size_t>(r.op) >= g->ops().size()) continue;  // setup/teardown
      std::string& s = sig[static_cast<size_t>(r.op)];
      if (s.empty()) {
        s = op_signature(*g, g->op(r.op));
        if (!k.batch_free.count(s))
          if (auto b = batch_free_signature(*g, g->op(r.op))) k.batch_free[s] = {b->key, b->batch};
      }
      d[s].push_back(static_cast<double>(r.end - r.start));
    }
  }
  for (auto& [s, v] : d) {
    k.samples[s] = v.size();
    k.times[s] = std::max<TimeNs>(1, static_cast<TimeNs>(std::llround(median(v))));  // the hw loader wants > 0
  }
  return k;
}

WorkspaceFit fit_conv_workspaces(const std::vector<std::pair<const Graph*, const nlohmann::json*>>& reports) {
  WorkspaceFit w;
  for (const auto& [g, rep] : reports) {
    if (rep->value("workspace_rule", std::string("graph")) != "any") {
      ++w.skipped;
      continue;
    }
    std::map<std::string, const Op*> by_name;
    for (const Op& op : g->ops()) by_name[op.name] = &op;
    for (const auto& [name, a] : rep->at("conv_algorithms").items()) {
      auto it = by_name.find(name);
      if (it == by_name.end() || it->second->workspace == kNoTensor) continue;
      const Op& op = *it->second;
      const std::string sig = op_signature(*g, op);
      WorkspaceFit::Entry e;
      e.bytes = a.at("workspace_bytes").get<uint64_t>();
      e.algorithm = a.value("algorithm", std::string());
      if (auto b = batch_free_signature(*g, op)) e.batch_free = b->key, e.batch = b->batch;
      auto [pos, fresh] = w.by_signature.emplace(sig, e);
      if (!fresh && e.bytes > pos->second.bytes) pos->second = e;
    }
  }
  return w;
}

RooflineCostModel single_efficiency_roofline(GpuSpec spec) {
  spec.op_class_scale.clear();  // the plain roofline is what the factor corrects
  // With the file's own roofline parameters (efficiencies, fixed cost), whichever model the file names.
  Params p(kernel_model_registry().get("roofline").params);
  for (const auto& [k, v] : spec.kernel_model_params.values())
    if (p.has(k)) p.set(k, v);
  RooflineOptions plain = RooflineOptions::parameters().from_params(p);
  plain.classes = ClassEfficiencies{};  // the factor corrects the single-efficiency roofline, not the per-class one
  plain.occupancy_scaling = false;
  return RooflineCostModel(std::move(spec), plain);
}

ClassScaleFit fit_op_class_scale(const std::vector<std::pair<const Graph*, const Trace*>>& runs, GpuSpec spec) {
  const RooflineCostModel roofline = single_efficiency_roofline(spec);
  std::map<std::pair<OpKind, MathPath>, std::vector<double>> ratios;
  for (const auto& [g, t] : runs) {
    std::vector<double> model(g->ops().size(), -1);
    for (const OpRecord& r : t->ops) {
      if (r.iteration < 0 || r.op < 0 || static_cast<size_t>(r.op) >= g->ops().size()) continue;
      const Op& op = g->op(r.op);
      // A foreach Adam update is not the kernel the factor serves (the roofline never applies it there); the
      // harness's own plans have none (dlsim validate writes fused updates), but a run directory may.
      if (is_foreach_update(op)) continue;
      double& m = model[static_cast<size_t>(r.op)];
      if (m < 0) m = static_cast<double>(roofline.cost(*g, op).duration_ns);
      if (m > 0) ratios[{op.kind, math_path(spec, *g, op)}].push_back(static_cast<double>(r.end - r.start) / m);
    }
  }
  ClassScaleFit f;
  for (auto& [key, v] : ratios) {
    const auto [k, path] = key;
    if (f.samples.contains(k) && f.samples[k] >= v.size()) continue;  // the path most of the kind's ops took
    f.samples[k] = v.size();
    f.scale[k] = median(v);
    if (is_matrix_op(k)) f.path[k] = path;
  }
  return f;
}

namespace {
// A number as six significant digits: yaml-cpp turns a double into text when it is assigned (17 digits, which
// only show binary rounding), so the text is made here; a plain scalar reads back as a number.
YAML::Node number(double v) {
  std::ostringstream o;
  o << std::setprecision(6) << v;
  return YAML::Node(o.str());
}
}  // namespace

YAML::Node apply_calibration(const YAML::Node& hw, const MicrobenchFit* micro, const KernelTimeFit& kernels,
                             const WorkspaceFit* workspaces, const ClassScaleFit* classes,
                             const ConcurrencyRegression* concurrency) {
  YAML::Node out = YAML::Clone(hw);
  auto round3 = [](double v) { return number(std::round(v * 1000.0) / 1000.0); };
  if (micro) {
    YAML::Node pcie = out["pcie"];
    auto bw = [&](CopyDir d, bool p) { return round3(micro->copies.at({d, p}).bandwidth / kGB); };
    pcie["h2d_pinned_gb_per_s"] = bw(CopyDir::HostToDevice, true);
    pcie["d2h_pinned_gb_per_s"] = bw(CopyDir::DeviceToHost, true);
    pcie["h2d_pageable_gb_per_s"] = bw(CopyDir::HostToDevice, false);
    pcie["d2h_pageable_gb_per_s"] = bw(CopyDir::DeviceToHost, false);
    // The hardware file has one latency per link: the mean of the two pinned intercepts (what swaps use).
    pcie["latency_us"] = round3((micro->copies.at({CopyDir::HostToDevice, true}).latency_ns +
                                 micro->copies.at({CopyDir::DeviceToHost, true}).latency_ns) / 2000.0);
    out["launch_overhead_us"] = round3(micro->launch_overhead_ns / 1000.0);
    out["cudamalloc"]["base_us"] = round3(std::max(0.0, micro->malloc_ns_vs_gib.intercept) / 1000.0);
    out["cudamalloc"]["us_per_gib"] = round3(std::max(0.0, micro->malloc_ns_vs_gib.slope) / 1000.0);
    out["cudafree"]["base_us"] = round3(std::max(0.0, micro->free_ns_vs_gib.intercept) / 1000.0);
    out["cudafree"]["us_per_gib"] = round3(std::max(0.0, micro->free_ns_vs_gib.slope) / 1000.0);
  }
  YAML::Node table(YAML::NodeType::Sequence);
  for (const auto& [sig, ns] : kernels.times) {  // std::map: signature order, deterministic
    YAML::Node e;
    e.SetStyle(YAML::EmitterStyle::Flow);  // one line per entry
    e["signature"] = sig;
    e["ns"] = ns;
    if (auto b = kernels.batch_free.find(sig); b != kernels.batch_free.end()) {
      e["batch_free"] = b->second.first;
      e["batch"] = b->second.second;
    }
    table.push_back(e);
  }
  out["kernel_times"] = table;
  if (workspaces && !workspaces->by_signature.empty()) {
    YAML::Node ws(YAML::NodeType::Sequence);
    for (const auto& [sig, e] : workspaces->by_signature) {
      YAML::Node n;
      n.SetStyle(YAML::EmitterStyle::Flow);
      n["signature"] = sig;
      n["bytes"] = e.bytes;
      n["algorithm"] = e.algorithm;
      if (!e.batch_free.empty()) {
        n["batch_free"] = e.batch_free;
        n["batch"] = e.batch;
      }
      ws.push_back(n);
    }
    out["conv_workspace"] = ws;
  }
  if (classes && !classes->scale.empty()) {
    YAML::Node cs(YAML::NodeType::Map);
    cs.SetStyle(YAML::EmitterStyle::Block);
    for (const auto& [k, v] : classes->scale) cs[to_string(k)] = number(v);  // significant digits: never 0
    // The factors correct the single-efficiency roofline for the kinds they name; the input's per-class model
    // ([F] values) stays for the kinds the runs did not measure (hw/roofline.h).
    out["roofline"]["op_class_scale"] = cs;
    YAML::Node ps(YAML::NodeType::Map);
    ps.SetStyle(YAML::EmitterStyle::Block);
    for (const auto& [k, p] : classes->path) ps[to_string(k)] = to_string(p);
    if (ps.size() > 0) out["roofline"]["op_class_scale_path"] = ps;
  }
  if (concurrency && !concurrency->points.empty()) {
    out["concurrent_kernels"]["gemm_blocks_per_sm"] = concurrency->gemm_blocks_per_sm;
    out["concurrent_kernels"]["co_run_slowdown"] = round3(concurrency->co_run_slowdown);
  }
  return out;
}

}  // namespace dlsim
