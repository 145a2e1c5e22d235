#include "policies/swap/singa/singa_swap.h"

#include <algorithm>

namespace dlsim {

const ParamBindings<SingaOptions>& SingaOptions::parameters() {
  using O = SingaOptions;
  static const auto b = ParamBindings<O>()
      .add_choice("rank", &O::rank,
                  ParamChoices<SingaRank>{{"doa", SingaRank::Doa}, {"aoa", SingaRank::Aoa},
                                          {"wdoa", SingaRank::Wdoa}, {"vote", SingaRank::Vote}},
                  "how candidates are ranked: doa (duration of absence), aoa (area of absence), wdoa (absence "
                  "weighted by the load over the limit), vote (majority voting of the three)")
      .add_choice("mode", &O::mode,
                  ParamChoices<SingaMode>{{"no-overhead", SingaMode::NoOverhead},
                                          {"stick-to-limit", SingaMode::StickToLimit}},
                  "no-overhead (transfers hidden behind the profiled timeline; the peak may stay above the limit) or "
                  "stick-to-limit (forced synchronisation and delayed swap-ins keep the load under it)")
      .add("min_bytes", &O::min_bytes, "smallest block considered for swapping", ParamCheck::at_least(0))
      .add_choice("transfer", &O::fit_transfers, ParamChoices<bool>{{"fit", true}, {"link", false}},
                  "copy-time model: fit (a line fitted to timed copies of the blocks over 1 MiB, as SINGA builds it) "
                  "or link (the hardware file's latency and bandwidth)")
      .add_all(&O::limit, MemoryLimit::parameters());
  return b;
}

SwapResult SingaSwap::plan(const SwapContext& ctx) {
  const Graph& g = ctx.graph;
  const SingaTrace trace(g, ctx.profile);
  SwapResult out;
  const uint64_t limit = o_.limit.resolve(ctx.profile.peak_live_bytes, ctx.device_capacity);
  out.target_bytes = limit;
  if (trace.size() == 0) return out;

  std::vector<uint64_t> timed;  // SINGA times the copies of the blocks over 1 MiB
  for (const Tensor& t : g.tensors())
    if (t.bytes > (uint64_t{1} << 20)) timed.push_back(t.bytes);
  const CopyTimeLine copy = o_.fit_transfers ? fit_copy_time(ctx.link, timed) : copy_time_from_link(ctx.link);

  const auto cands = singa_candidates(trace, copy, o_.min_bytes, limit);
  const SingaSelection sel = singa_select(trace, cands, singa_ranking(cands, o_.rank), limit);
  const auto sched = singa_schedule(trace, sel.chosen, copy, o_.mode, limit);

  TimeNs stall = 0, exposed = 0;
  int dropped = 0, not_hidden = 0;
  for (const ScheduledSwap& x : sched) {
    stall += x.stall_ns;
    const int r_pos = trace.at(x.c.r).pos, d_pos = trace.at(x.c.d).pos;
    SwapAction a;
    a.tensor = x.c.tensor;
    a.out_after = std::max(r_pos, trace.after_pos(std::min(x.out_start, x.c.d)));
    a.in_needed_by = d_pos;
    a.in_issue_after = std::min(d_pos - 1, trace.after_pos(std::min(x.in_start, x.c.d)));
    a.free_after = x.out_end >= trace.size() ? d_pos : std::max(a.out_after, trace.after_pos(x.out_end));
    if (a.free_after >= a.in_issue_after || a.out_after > a.in_issue_after) {
      ++dropped;
      continue;
    }
    exposed += x.exposed_ns;
    not_hidden += x.exposed_ns > 0;
    out.plan.actions.push_back(a);
  }
  out.report = {{"peak_index", trace.peak_index()},
                {"records", trace.size()},
                {"candidates", cands.size()},
                {"selected", sel.chosen.size()},
                {"dropped_no_absence", dropped},
                {"ideal_peak_bytes", sel.ideal_peak},
                {"selection_met_limit", sel.met},
                {"singa_overhead_us", static_cast<double>(stall) / 1000.0},
                {"profiled_exposed_us", static_cast<double>(exposed) / 1000.0},
                {"profiled_not_hidden", not_hidden},
                {"copy_out_ns_per_byte", copy.out_ns_per_byte},
                {"copy_out_latency_us", copy.out_latency_ns / 1000.0},
                {"copy_in_ns_per_byte", copy.in_ns_per_byte},
                {"copy_in_latency_us", copy.in_latency_ns / 1000.0}};
  return out;
}

}  // namespace dlsim
