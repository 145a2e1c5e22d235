#include "validate/calibrate/interconnect_fit/interconnect_fit_report.h"

#include <cstdio>
#include <sstream>

#include "common/strings.h"

namespace dlsim {
namespace {

std::string ifit_percent(double rel) { return (rel >= 0 ? "+" : "") + fixed(100 * rel, 1) + " %"; }

std::string ifit_yaml_quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  }
  return q + "\"";
}

// The value as the file writes it: latencies to 0.001 us, efficiencies to 4 significant digits.
std::string ifit_value_text(const FittedLinkParam& p) {
  const bool latency = p.param == LinkParam::BaseLatency || p.param == LinkParam::IntraLatency ||
                       p.param == LinkParam::InterLatency;
  return latency ? significant(p.value, 6) : significant(p.value, 4);
}

}  // namespace

std::string interconnect_fit_report(const InterconnectFit& fit) {
  std::ostringstream r;
  r << "parameters (least squares of relative time residuals, " << fit.iterations << " Gauss-Newton steps):\n";
  for (const FittedLinkParam& p : fit.params) {
    r << "  " << link_param_key(p.param) << ": " << significant(p.start) << " -> ";
    if (p.fitted)
      r << ifit_value_text(p) << (p.note.empty() ? "" : " (" + p.note + ")");
    else
      r << "kept (" << p.note << ")";
    r << "\n";
  }
  r << "points (" << fit.points.size() << "): measured, the starting file's model, the fitted model"
    << (fit.rms_loo > 0 ? ", the fit without the point" : "") << ", what its time is mostly made of\n";
  r << "  collective      ranks nodes        bytes   measured_us   start_us    fit_us  residual"
    << (fit.rms_loo > 0 ? "    loo_us       loo" : "") << "  algo  constrains\n";
  for (const FittedPoint& p : fit.points) {
    const double m = p.point.time_us;
    char line[256];
    std::snprintf(line, sizeof line, "  %-15s %5d %5d %12llu %13.3f %10.3f %9.3f %9s", to_string(p.point.kind).c_str(),
                  p.point.ranks, p.nodes, static_cast<unsigned long long>(p.point.bytes), m, p.start_us, p.model_us,
                  ifit_percent(p.model_us / m - 1).c_str());
    r << line;
    if (fit.rms_loo > 0) {
      std::snprintf(line, sizeof line, " %9.3f %9s", p.loo_us, ifit_percent(p.loo_us / m - 1).c_str());
      r << line;
    }
    r << "  " << to_string(p.algo) << "  " << p.constrains() << "\n";
  }
  r << "relative residual, RMS: starting file " << fixed(100 * fit.rms_start, 2) << " %, fitted "
    << fixed(100 * fit.rms_fitted, 2) << " % (largest " << fixed(100 * fit.max_fitted, 2) << " %)";
  if (fit.rms_loo > 0)
    r << ", leave-one-out " << fixed(100 * fit.rms_loo, 2) << " % (largest " << fixed(100 * fit.max_loo, 2) << " %)";
  r << "\n";
  return r.str();
}

std::string fitted_interconnect_yaml(const InterconnectFit& fit, const std::string& comment,
                                     const std::string& base_reference, const std::string& description) {
  std::ostringstream y;
  for (const std::string& line : split(comment, '\n')) y << "# " << line << "\n";
  y << "base: " << base_reference << "\n"
    << "description: " << ifit_yaml_quoted(description) << "\n"
    << "interconnect:\n";
  auto find = [&](LinkParam p) -> const FittedLinkParam* {
    for (const FittedLinkParam& f : fit.params)
      if (f.param == p && f.fitted) return &f;
    return nullptr;
  };
  if (const FittedLinkParam* p = find(LinkParam::BaseLatency)) y << "  base_latency_us: " << ifit_value_text(*p) << "\n";
  const std::pair<const char*, std::pair<LinkParam, LinkParam>> levels[] = {
      {"intra_node", {LinkParam::IntraLatency, LinkParam::IntraEfficiency}},
      {"inter_node", {LinkParam::InterLatency, LinkParam::InterEfficiency}}};
  for (const auto& [name, keys] : levels) {
    const FittedLinkParam* lat = find(keys.first);
    const FittedLinkParam* eff = find(keys.second);
    if (!lat && !eff) continue;
    y << "  " << name << ":\n";
    if (lat) y << "    latency_us: " << ifit_value_text(*lat) << "\n";
    if (eff) y << "    bus_efficiency: " << ifit_value_text(*eff) << "\n";
  }
  return y.str();
}

}  // namespace dlsim
