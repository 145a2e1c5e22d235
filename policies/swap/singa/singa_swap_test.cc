// SINGA's swapping on a hand-made iteration (testing/swap_graphs.h: NestedAbsences) whose scores, choices and
// schedule are worked out below from the rules in singa_select.h and singa_schedule.h. Sizes in MiB, times
// in ms; the link moves D2H at 1 ns/B and H2D at 0.5 ns/B, 10 us each, so a MiB goes out in 1.048576 ms.
#include "policies/swap/singa/singa_swap.h"

#include <catch2/catch.hpp>

#include "common/config_error.h"
#include "policies/swap/core/program_load.h"
#include "policies/swap/testing/swap_graphs.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {
// Records: 0 Malloc t1, 1 Write t1 | 2 Malloc t2, 3 Write t2 | 4 Malloc t3, 5 Write t3 | 6, 7, 8 Read w |
// 9 Malloc s, 10 Write s | 11, 12, 13 Read w | 14 Read t3, 15 Read s, 16 Free t3, 17 Free s | 18 Read t2,
// 19 Free t2 | 20 Read t1, 21 Free t1. Loads after each (MiB, w = 0.25 always there):
const std::vector<double> kLoads = {2.25,  2.25,  6.25,  6.25,  22.25, 22.25, 22.25, 22.25, 22.25, 30.25, 30.25,
                                    30.25, 30.25, 30.25, 30.25, 30.25, 14.25, 6.25,  6.25,  2.25,  2.25,  0.25};

SingaOptions options(const std::string& rank, const std::string& mode, int64_t limit_mb) {
  Params p(SingaOptions::parameters().specs());
  p.set("rank", rank);
  p.set("mode", mode);
  p.set("limit_mb", limit_mb);
  p.set("transfer", std::string("link"));
  return SingaOptions::parameters().from_params(p);
}

// SINGA's steps one by one on the hand-made iteration: candidates at least 1 MiB, DOA's ranking, greedy selection
// and the schedule in `mode`, all at a 25 MiB limit, with the link's own copy times.
std::vector<ScheduledSwap> schedule_doa_at_25(const NestedAbsences& m, SingaMode mode) {
  const SingaTrace tr(m.g, m.profile);
  const CopyTimeLine copy = copy_time_from_link(TestLink());
  const auto c = singa_candidates(tr, copy, kMiB, 25 * kMiB);
  const auto sel = singa_select(tr, c, singa_ranking(c, SingaRank::Doa), 25 * kMiB);
  return singa_schedule(tr, sel.chosen, copy, mode, 25 * kMiB);
}

std::vector<TensorId> tensors(const std::vector<SwapCandidate>& c) {
  std::vector<TensorId> v;
  for (const auto& x : c) v.push_back(x.tensor);
  return v;
}
}  // namespace

TEST_CASE("SINGA's record of the hand-made iteration: Malloc, Read, Write, Free with loads and the peak index") {
  NestedAbsences m;
  const SingaTrace tr(m.g, m.profile);
  REQUIRE(tr.size() == 22);
  for (int i = 0; i < tr.size(); ++i) CHECK(static_cast<double>(tr.at(i).load) / kMiB == kLoads[static_cast<size_t>(i)]);
  CHECK(tr.at(9).op == BlockOp::Malloc);
  CHECK(tr.at(9).tensor == m.s);
  CHECK(tr.peak_index() == 9);  // the first index of the largest load
  CHECK(tr.at(16).op == BlockOp::Free);
  CHECK(tr.at(16).time == 20 * kMs);  // a Free carries its op's end
  CHECK(tr.after_pos(16) == 10);      // ... and is issued after its own op
  CHECK(tr.after_pos(14) == 9);       // a Read is issued before its op's kernel: after the op before
  CHECK(tr.first_at_or_after(6 * kMs + 1) == 11);
  CHECK(tr.last_at_or_before(17 * kMs - 1) == 11);
}

TEST_CASE("SINGA's candidates: accesses straddling the peak, at least 1 MiB, after a Read or Write") {
  NestedAbsences m;
  const SingaTrace tr(m.g, m.profile);
  const auto c = singa_candidates(tr, copy_time_from_link(TestLink()), kMiB, 25 * kMiB);
  // w (0.25 MiB) straddles the peak too but is under 1 MiB; s is written at index 10, after the peak.
  REQUIRE(tensors(c) == std::vector<TensorId>{m.t1, m.t2, m.t3});
  CHECK(c[0].r == 1);
  CHECK(c[0].d == 20);
  CHECK(c[0].ready == 7);  // after a Write: r + 6
  CHECK(c[1].ready == 9);
  CHECK(c[2].ready == 11);
  CHECK(c[0].doa_origin == 21 * kMs);  // t(20) - t(1) = 21 - 0
  CHECK(c[1].doa_origin == 19 * kMs);
  CHECK(c[2].doa_origin == 17 * kMs);
  // with a limit of 1 MiB more the weight would qualify: its Read at 8 and its Read at 11 straddle index 9
  CHECK(singa_candidates(tr, copy_time_from_link(TestLink()), kMiB / 4, 25 * kMiB).size() == 4);
}

TEST_CASE("SINGA's scores: DOA net of out + in, AOA, WDOA against the limit, and the four rankings") {
  NestedAbsences m;
  const SingaTrace tr(m.g, m.profile);
  const auto c = singa_candidates(tr, copy_time_from_link(TestLink()), kMiB, 25 * kMiB);
  // t1: 21 ms - (2,097,152 + 10,000) - (1,048,576 + 10,000) ns
  CHECK(c[0].doa == 21e6 - 2'107'152 - 1'058'576);
  CHECK(c[1].doa == 19e6 - 4'204'304 - 2'107'152);
  CHECK(c[2].doa == 17e6 - 16'787'216 - 8'398'608);  // negative: t3 cannot go out and back in its absence
  CHECK(c[0].aoa == c[0].doa * 2 * kMiB);
  CHECK(c[2].aoa == c[2].doa / (16 * kMiB));          // a negative DOA is divided by the size
  // WDOA: sum of (load - 25) over indices [r, d): t3 over 5..13 = 4 x 22.25 + 5 x 30.25 - 9 x 25 = 15.25 MiB,
  // t2 over 3..17 = 349.75 - 375 = -25.25, t1 over 1..19 = 366.75 - 475 = -108.25
  CHECK(c[2].wdoa == Approx(15.25 * kMiB));
  CHECK(c[1].wdoa == Approx(-25.25 * kMiB));
  CHECK(c[0].wdoa == Approx(-108.25 * kMiB));
  CHECK(singa_ranking(c, SingaRank::Doa) == std::vector<size_t>{0, 1, 2});   // t1, t2, t3
  CHECK(singa_ranking(c, SingaRank::Aoa) == std::vector<size_t>{1, 0, 2});   // t2 (52 TB.ns), t1 (37), t3 < 0
  CHECK(singa_ranking(c, SingaRank::Wdoa) == std::vector<size_t>{2, 1, 0});  // t3, t2, t1
  // majority vote: places t1 0+1+2 = 3, t2 1+0+1 = 2, t3 2+2+0 = 4
  CHECK(singa_ranking(c, SingaRank::Vote) == std::vector<size_t>{1, 0, 2});
}

TEST_CASE("SINGA's greedy selection: down the ranking until the instant-swap peak is under the limit") {
  NestedAbsences m;
  const SingaTrace tr(m.g, m.profile);
  auto pick = [&](SingaRank r, uint64_t limit_mib) {
    const auto c = singa_candidates(tr, copy_time_from_link(TestLink()), kMiB, limit_mib * kMiB);
    return singa_select(tr, c, singa_ranking(c, r), limit_mib * kMiB);
  };
  // 25 MiB: doa takes t1 (peak 28.25) then t2 (24.25); aoa and vote t2 (26.25) then t1. wdoa starts with t3,
  // whose ready index 11 is after the peak: indices 9 and 10 keep 30.25, so it needs t2 and t1 as well.
  CHECK(tensors(pick(SingaRank::Doa, 25).chosen) == std::vector<TensorId>{m.t1, m.t2});
  CHECK(tensors(pick(SingaRank::Aoa, 25).chosen) == std::vector<TensorId>{m.t2, m.t1});
  CHECK(tensors(pick(SingaRank::Vote, 25).chosen) == std::vector<TensorId>{m.t2, m.t1});
  const auto w = pick(SingaRank::Wdoa, 25);
  CHECK(tensors(w.chosen) == std::vector<TensorId>{m.t3, m.t2, m.t1});
  CHECK(w.met);
  CHECK(w.ideal_peak == 24 * kMiB + kMiB / 4);
  // 29 MiB: one block is enough for doa (t1: 28.25) and aoa (t2: 26.25); wdoa still needs two
  CHECK(tensors(pick(SingaRank::Doa, 29).chosen) == std::vector<TensorId>{m.t1});
  CHECK(tensors(pick(SingaRank::Aoa, 29).chosen) == std::vector<TensorId>{m.t2});
  CHECK(tensors(pick(SingaRank::Wdoa, 29).chosen) == std::vector<TensorId>{m.t3, m.t2});
  // 5 MiB: every candidate taken and the limit still missed (the ops' own tensors remain)
  const auto low = pick(SingaRank::Vote, 5);
  CHECK(low.chosen.size() == 3);
  CHECK_FALSE(low.met);
}

TEST_CASE("SINGA's no-overhead schedule hides transfers behind the profile, so the peak may stay above the limit") {
  NestedAbsences m;
  const auto s = schedule_doa_at_25(m, SingaMode::NoOverhead);
  REQUIRE(s.size() == 2);
  // t1 goes out from its ready index 7 (4 ms) for 2.107 ms: the first index at or after 6.107 ms is 11 (16 ms)
  CHECK(s[0].out_start == 7);
  CHECK(s[0].out_end == 11);
  // t2 queues behind it on the serial D2H stream: 16 ms + 4.204 ms, past its next use at index 18 (20 ms)
  CHECK(s[1].out_start == 11);
  CHECK(s[1].out_end == 19);
  // swap-ins backwards from the latest use: t1 needed at 20 (21 ms) starts by 19.94 ms, index 15;
  // t2 must then be in by index 15 (19 ms): starts by 16.89 ms, index 11, but not before its swap-out ends
  CHECK(s[0].in_start == 15);
  CHECK(s[1].in_start == 19);
  CHECK(s[0].stall_ns + s[1].stall_ns == 0);
  // t1's swap-in hides on the profiled timeline; t2's cannot (its swap-out ends at 19, after it had to be back)
  CHECK(s[0].exposed_ns == 0);
  CHECK(s[1].exposed_ns > 0);

  SingaSwap policy(options("doa", "no-overhead", 25));
  const SwapResult r = policy.plan({m.g, m.schedule, m.profile, TestLink(), 1 << 30, nullptr});
  // t2's swap leaves no absence and is dropped; t1 is out after op 3 (index 7 belongs to op 4), freed after op 6
  // (index 11 belongs to op 7), back after op 9 (index 15 is op 10's), needed by G at 12
  REQUIRE(r.plan.actions.size() == 1);
  const SwapAction& a = r.plan.actions[0];
  CHECK(a.tensor == m.t1);
  CHECK(a.out_after == 3);
  CHECK(a.free_after == 6);
  CHECK(a.in_issue_after == 9);
  CHECK(a.in_needed_by == 12);
  CHECK(r.report["dropped_no_absence"] == 1);
  // what the plan keeps hides on the profile it was built from: nothing exposed (t2's exposure left with it)
  CHECK(r.report["profiled_not_hidden"] == 0);
  CHECK(r.report["profiled_exposed_us"] == 0.0);
  CHECK(r.target_bytes == 25 * kMiB);
  CHECK(ProgramLoad(m.g, m.schedule.order).peak_with(r.plan, m.schedule.stream_of) == 30 * kMiB + kMiB / 4);  // D still runs with t1 on board
}

TEST_CASE("SINGA's stick-to-limit forces swap-outs to finish and delays swap-ins, and its plan meets the limit") {
  NestedAbsences m;
  const auto s = schedule_doa_at_25(m, SingaMode::StickToLimit);
  REQUIRE(s.size() == 2);
  // t1: the load at index 9 (30.25) is over 25 while t1 is still going out: forced to finish there,
  // 6.107152 - 6 ms late. t2 starts at 9 too and is forced at once: its whole 4.204304 ms.
  CHECK(s[0].out_end == 9);
  CHECK(s[1].out_start == 9);
  CHECK(s[1].out_end == 9);
  // t1 back from 15 would make 26.25 there: delayed to 16 (20 ms), in by 21.058576 ms, 58,576 ns after 21 ms.
  // t2 must be in by 16 (20 ms): from 12 it would cross 25 up to 15, so 16, 2.107152 ms late.
  CHECK(s[0].in_start == 16);
  CHECK(s[1].in_start == 16);
  CHECK(s[0].stall_ns == 107'152 + 58'576);
  CHECK(s[1].stall_ns == 4'204'304 + 2'107'152);

  SingaSwap policy(options("doa", "stick-to-limit", 25));
  const SwapResult r = policy.plan({m.g, m.schedule, m.profile, TestLink(), 1 << 30, nullptr});
  REQUIRE(r.plan.actions.size() == 2);
  CHECK(r.plan.actions[0].out_after == 3);
  CHECK(r.plan.actions[0].free_after == 5);  // index 9 is D's Malloc: freed before D
  CHECK(r.plan.actions[0].in_issue_after == 10);
  CHECK(r.plan.actions[1].out_after == 5);
  CHECK(r.plan.actions[1].free_after == 5);
  CHECK(r.plan.actions[1].in_needed_by == 11);
  CHECK(r.report["singa_overhead_us"].get<double>() == Approx(6477.184));
  CHECK(ProgramLoad(m.g, m.schedule.order).peak_with(r.plan, m.schedule.stream_of) == 24 * kMiB + kMiB / 4);
}

TEST_CASE("SINGA's transfer model: a line fitted to timed copies, or the link's own") {
  const TestLink link;
  const CopyTimeLine fit = fit_copy_time(link, {2 * kMiB, 4 * kMiB, 16 * kMiB, 16 * kMiB});
  CHECK(fit.out_ns_per_byte == Approx(1.0));
  CHECK(fit.out_latency_ns == Approx(10'000).margin(1));
  CHECK(fit.in_ns_per_byte == Approx(0.5));
  CHECK(fit.in(kMiB) == 10'000 + 524'288);
  const CopyTimeLine one = fit_copy_time(link, {4 * kMiB});  // one size: nothing to fit
  CHECK(one.out(kMiB) == link.copy_time(CopyDir::DeviceToHost, kMiB, true));
}

TEST_CASE("SINGA's memory limit: limit_mb wins, then limit_fraction of the no-swap peak, else the device") {
  Params p(SingaOptions::parameters().specs());
  CHECK(SingaOptions::parameters().from_params(p).limit.resolve(100, 80) == 80);
  p.set("limit_fraction", 0.5);
  CHECK(SingaOptions::parameters().from_params(p).limit.resolve(100, 80) == 50);
  p.set("limit_mb", int64_t{3});
  CHECK(SingaOptions::parameters().from_params(p).limit.resolve(100, 80) == 3 * kMiB);
  p.set("rank", std::string("best"));
  CHECK_THROWS_WITH(check_params(SingaOptions::parameters().specs(), p, "singa"), Catch::Contains("doa, aoa, wdoa, vote"));
  Params q(SingaOptions::parameters().specs());
  q.set("limit_fraction", 1.5);
  CHECK_THROWS_WITH(check_params(SingaOptions::parameters().specs(), q, "singa"), Catch::Contains("limit_fraction"));
}
