// The layout search of `dlsim fit --gpus`: worked by hand on a two-layer model whose per-rank memory follows the
// layouts' sharding rules, then through the simulator itself.
#include "experiment/layout_search.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "common/config_error.h"

using namespace dlsim;

namespace {

constexpr uint64_t kSearchMiB = 1 << 20;

// Two layers of 1,000,000 fp32 parameters each (4 MiB taken as one unit here, so the arithmetic stays whole): P =
// 8 MiB of weights, AdamW. What one rank holds at its peak, in MiB, for batch b per GPU on N GPUs:
//   plain (one GPU):  weights 8 + gradients 8 + moments 16              + b (activations) = 32 + b
//   dp:               the plain run + DDP's buckets 8                                      = 40 + b
//   zero1:            weights 8 + gradients 8 + moments 16/N + buckets 8                  = 24 + 16/N + b
//   zero2:            weights 8 + gradient partitions 8/N + moments 16/N + one bucket 4   = 12 + 24/N + b
//   fsdp:             shards (8 + 8 + 16)/N + one unit gathered 4 and its gradient 4      =  8 + 32/N + b
// Time per iteration: 1000 us per sample plus a layout's cost: dp 10, zero1 20, zero2 15 N, fsdp 40 us.
ExperimentResult two_layer_run(const Experiment& x, uint64_t capacity_mib) {
  const double n = static_cast<double>(x.parallel.ranks);
  const double b = static_cast<double>(x.batch);
  double mib = 0, extra_us = 0;
  if (x.parallel.is_single()) mib = 32 + b;
  else if (x.parallel.layout == parallel::Layout::Ddp) mib = 40 + b, extra_us = 10;
  else if (x.parallel.layout == parallel::Layout::Zero && x.parallel.zero_stage == 1) mib = 24 + 16 / n + b, extra_us = 20;
  else if (x.parallel.layout == parallel::Layout::Zero) mib = 12 + 24 / n + b, extra_us = 15 * n;
  else mib = 8 + 32 / n + b, extra_us = 40;
  ExperimentResult r;
  r.peak_live_bytes = r.peak_reserved_bytes = static_cast<uint64_t>(mib * kSearchMiB);
  r.oom = mib > static_cast<double>(capacity_mib);
  r.oom_where = r.oom ? "out of memory" : "";
  r.iterations_run = r.oom ? 0 : x.iterations;
  r.iteration_time_us = 1000 * b + extra_us;
  return r;
}

Experiment base_experiment(const std::string& extra = "") {
  return experiment_from_yaml(YAML::Load("{model: cifar-resnet20, batch: 4, hw: h100-sxm, pool: pytorch-caching, swap: none,"
                                         " concurrency: serial, iterations: 2, optimizer: adamw" + extra + "}"),
                              "search.yaml");
}

// The two-layer Llama of workloads/tensor_parallel_test.cc (8 heads over 4 key/value heads: tp 2 and 4 divide), one
// file per process (CTest runs this binary's cases in parallel processes).
std::string tiny_llama_config() {
  const std::filesystem::path p = std::filesystem::temp_directory_path() /
                                  ("dlsim-layout-search-test-config-" + std::to_string(::getpid()) + ".json");
  std::ofstream(p) << R"({"model_type": "llama", "hidden_act": "silu", "vocab_size": 1000, "hidden_size": 256,
    "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 4,
    "max_position_embeddings": 1024, "tie_word_embeddings": false, "attention_bias": false})";
  return p.string();
}

Experiment tiny_llama_experiment(const std::string& extra = "") {
  return experiment_from_yaml(YAML::Load("{model: " + tiny_llama_config() + ", batch: 2, seq_len: 64, hw: h100-sxm,"
                                         " pool: pytorch-caching, swap: none, concurrency: serial, iterations: 2,"
                                         " optimizer: adamw" + extra + "}"),
                              "search.yaml");
}

}  // namespace

TEST_CASE("layout search on the two-layer model: smallest GPU count, largest batch, fastest layout, by hand") {
  const RunFn run = [](const Experiment& x) { return two_layer_run(x, 30); };  // a 30 MiB GPU
  const auto layouts = parse_layout_candidates({"dp", "fsdp", "zero1", "zero2"}, "--layouts");
  const LayoutSearch s = search_layouts(base_experiment(), layouts, {1, 2, 4, 8}, run, 1 << 16);
  REQUIRE(s.cells.size() == 16);
  CHECK(s.batch == 4);
  // Batch 4: one GPU holds 36 > 30 under every layout; dp needs 44 on any count; zero1 24 + 16/N + 4 <= 30 from N =
  // 8 (30); zero2 12 + 24/N + 4 from N = 2 (28); fsdp 8 + 32/N + 4 from N = 2 (28).
  CHECK(s.smallest_gpus(0) == 0);
  CHECK(s.smallest_gpus(1) == 2);
  CHECK(s.smallest_gpus(2) == 8);
  CHECK(s.smallest_gpus(3) == 2);
  for (size_t i = 0; i < 4; ++i) CHECK(s.cell(i, 0).status == "oom");
  CHECK(s.cell(0, 3).status == "oom");
  CHECK(s.cell(2, 2).status == "oom");  // zero1 on 4: 24 + 4 + 4 = 32
  CHECK(s.cell(2, 3).fits());
  // The largest batch per GPU: 30 - the states. fsdp 30 - 8 - 32/N: 6, 14, 18 on 2, 4, 8; zero2 30 - 12 - 24/N: 6,
  // 12, 15; zero1 30 - 24 - 16/N: 0, 2, 4; dp never; on one GPU 30 - 32 < 1 for all.
  const std::vector<std::vector<int64_t>> max_batch = {{0, 0, 0, 0}, {0, 6, 14, 18}, {0, 0, 2, 4}, {0, 6, 12, 15}};
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 0; j < 4; ++j) {
      CAPTURE(i, j);
      CHECK(s.cell(i, j).max_batch == max_batch[i][j]);
    }
  CHECK(s.cell(1, 3).iteration_time_at_max_us == 18 * 1000 + 40);
  // Fastest that fits at batch 4 (4000 us + the layout's cost): on 2, zero2's 30 beats fsdp's 40; on 4 fsdp's 40
  // beats zero2's 60; on 8 zero1's 20 beats fsdp's 40 and zero2's 120.
  CHECK(s.fastest_at(0) == -1);
  CHECK(s.fastest_at(1) == 3);
  CHECK(s.fastest_at(2) == 1);
  CHECK(s.fastest_at(3) == 2);
  const nlohmann::json j = to_json(s);
  CHECK(j["smallest_gpus"]["dp"].is_null());
  CHECK(j["smallest_gpus"]["fsdp"] == 2);
  CHECK(j["fewest_gpus"] == nlohmann::json({{"gpus", 2}, {"layout", "zero2"}}));
  CHECK(j["fastest_that_fits"][2]["layout"] == "fsdp");
  CHECK(j["fastest_that_fits"][2]["iteration_time_us"] == 4040.0);
  CHECK(j["cells"][0]["oom_where"] == "out of memory");
  CHECK(j["cells"][5]["samples_per_s_per_gpu"] == Approx(4e6 / 4040.0));
}

TEST_CASE("layout search: a tie goes to the layout listed first, and a failing run is a cell, not the end") {
  // On a 100 MiB GPU every layout fits batch 4 on 1 GPU, all as the plain run (4000 us): the first listed wins.
  const RunFn roomy = [](const Experiment& x) { return two_layer_run(x, 100); };
  const LayoutSearch a = search_layouts(base_experiment(), parse_layout_candidates({"zero2", "dp"}, "--layouts"), {1},
                                        roomy, 64, false);
  CHECK(a.fastest_at(0) == 0);
  CHECK(a.cell(0, 0).max_batch == 0);  // not searched
  const RunFn failing = [](const Experiment& x) {
    if (x.parallel.layout == parallel::Layout::Fsdp && x.parallel.ranks == 8) throw ConfigError("hw.yaml", 3, "node", "too many ranks");
    return two_layer_run(x, 30);
  };
  const LayoutSearch b = search_layouts(base_experiment(), parse_layout_candidates({"fsdp"}, "--layouts"), {4, 8}, failing, 64);
  CHECK(b.cell(0, 0).fits());
  CHECK(b.cell(0, 1).status == "error");
  CHECK(b.cell(0, 1).message.find("too many ranks") != std::string::npos);
  CHECK(b.any_error());
  CHECK(to_json(b)["cells"][1]["error"].get<std::string>().find("node") != std::string::npos);
}

TEST_CASE("layout names and GPU counts: bad input names the flag") {
  auto message = [](auto f) {
    try {
      f();
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(message([] { parse_layout_candidates({"dp", "tp"}, "--layouts"); }),
             Catch::Contains("--layouts") && Catch::Contains("unknown layout 'tp'"));
  CHECK_THAT(message([] { parse_layout_candidates({"ddp+tp2"}, "--layouts"); }), Catch::Contains("unknown layout 'ddp+tp2'"));
  for (const char* bad : {"fsdp+tp", "fsdp+tp1", "fsdp+tp0", "fsdp+tp2048", "fsdp+tpx", "fsdp+tp-2", "fsdp+tp99999999999"}) {
    CAPTURE(bad);
    CHECK_THAT(message([bad] { parse_layout_candidates({bad}, "--layouts"); }),
               Catch::Contains("--layouts") && Catch::Contains("from 2 to 1024"));
  }
  CHECK_THAT(message([] { parse_layout_candidates({"fsdp+tp8", "fsdp+tp8"}, "--layouts"); }), Catch::Contains("twice"));
  CHECK_THAT(message([] { parse_layout_candidates({}, "--layouts"); }), Catch::Contains("--layouts") && Catch::Contains("no layout"));
  CHECK_THAT(message([] { parse_layout_candidates({"fsdp", "fsdp"}, "--layouts"); }), Catch::Contains("twice"));
  CHECK_THAT(message([] { check_gpu_counts({4, 0}, "--gpus"); }), Catch::Contains("--gpus") && Catch::Contains("got 0"));
  CHECK_THAT(message([] { check_gpu_counts({(int64_t{1} << 20) + 1}, "--gpus"); }), Catch::Contains("between 1 and 1048576"));
  CHECK_THAT(message([] { check_gpu_counts({}, "--gpus"); }), Catch::Contains("--gpus"));
  CHECK_THAT(message([] { check_gpu_counts({2, 2}, "--gpus"); }), Catch::Contains("twice"));
  CHECK_THAT(message([] { gpu_counts_up_to(0, "--max-gpus"); }), Catch::Contains("--max-gpus"));
  CHECK(check_gpu_counts({8, 1, 64}, "--gpus") == std::vector<int64_t>{1, 8, 64});
  CHECK(gpu_counts_up_to(12, "--max-gpus") == std::vector<int64_t>{1, 2, 4, 8, 12});
  CHECK(gpu_counts_up_to(1, "--max-gpus") == std::vector<int64_t>{1});
}

TEST_CASE("with_layout keeps the experiment's own parallel options") {
  const Experiment e = base_experiment(", parallel: {dp: 2, bucket_cap_mb: 50}");
  const Experiment z = with_layout(e, parse_layout_candidates({"zero2"}, "--layouts")[0], 16);
  CHECK(z.parallel.label() == "zero2,dp=16(bucket_cap_mb=50)");
}

TEST_CASE("with_layout: a count is the job's GPUs, data-parallel ranks x tp, at the same global batch") {
  const auto c = parse_layout_candidates({"fsdp", "fsdp+tp8", "dp+tp2", "zero1+tp4"}, "--layouts");
  CHECK(c[0].tp == 1);
  CHECK(c[1].tp == 8);
  CHECK(c[1].layout == parallel::Layout::Fsdp);
  CHECK(c[2].layout == parallel::Layout::Ddp);
  CHECK(c[3].zero_stage == 1);
  const Experiment e = base_experiment();  // batch 4 per GPU
  const Experiment f = with_layout(e, c[0], 64);
  CHECK(f.parallel.gpus() == 64);
  CHECK(f.batch == 4);
  const Experiment t = with_layout(e, c[1], 64);
  CHECK(t.parallel.gpus() == 64);  // 8 FSDP ranks of 8 tp ranks, not 64 x 8
  CHECK(t.parallel.ranks == 8);
  CHECK(t.parallel.tp == 8);
  CHECK(t.parallel.sequence_parallel);  // torchtitan's TP: sequence parallel on
  CHECK(t.batch == 32);                 // 8 GPUs share a data-parallel rank's batch: 4 per GPU, as fsdp's
  CHECK(with_layout(e, c[3], 8).parallel.label() == "zero1,dp=2,tp=4(sequence_parallel)");
  // On 8 GPUs tp 8 leaves one data-parallel rank: no wrapper, tp alone.
  CHECK(with_layout(e, c[1], 8).parallel.data_parallel_single());
  CHECK(with_layout(e, c[1], 8).parallel.gpus() == 8);
  CHECK_FALSE(layout_fits_count(c[1], 4));
  CHECK_FALSE(layout_fits_count(c[1], 12));
  CHECK(layout_fits_count(c[1], 16));
  CHECK_THROWS_AS(with_layout(e, c[1], 12), std::invalid_argument);
}

TEST_CASE("with_layout: the experiment's own tp is replaced by the candidate's, its tp options kept") {
  // A section of {fsdp: 8, tp: 2} searched as plain fsdp used to keep tp 2, running 2 x the count of GPUs.
  const Experiment e = tiny_llama_experiment(", parallel: {fsdp: 8, tp: 2, tp_across_nodes: true, reshard_after_forward: false}");
  const auto c = parse_layout_candidates({"fsdp", "fsdp+tp4"}, "--layouts");
  const Experiment f = with_layout(e, c[0], 16);
  CHECK(f.parallel.gpus() == 16);
  CHECK(f.parallel.tp == 1);
  CHECK_FALSE(f.parallel.sequence_parallel);
  CHECK_FALSE(f.parallel.tp_across_nodes);
  CHECK_FALSE(f.parallel.reshard_after_forward);
  const Experiment t = with_layout(e, c[1], 16);
  CHECK(t.parallel.gpus() == 16);
  CHECK(t.parallel.ranks == 4);
  CHECK_FALSE(t.parallel.sequence_parallel);  // the section named tp without sequence_parallel
  CHECK(t.parallel.tp_across_nodes);
}

TEST_CASE("default layouts: fsdp+tp2/4/8 for a model built for tensor parallelism only") {
  CHECK(default_layout_names("cifar-resnet20") == layout_candidate_names());
  CHECK(default_layout_names("llama3-8b") ==
        std::vector<std::string>{"dp", "fsdp", "zero1", "zero2", "fsdp+tp2", "fsdp+tp4", "fsdp+tp8"});
  CHECK(default_layout_names("some/Llama.config.json").size() == 7);
}

TEST_CASE("layout search with tp by hand: skipped counts, the batch per GPU, the fastest layout") {
  // The two-layer model's fsdp rule, a tp rank holding 1/T of everything: on N GPUs with T = tp, F = N / T ranks,
  // batch per data-parallel rank B = b x T: (8 + 32/F) / T + B / T = (8 + 32/F) / T + b MiB, and 1000 us per
  // sample per tp group plus 5 us per tp rank (its all-reduces): 1000 B / T + 5 T = 1000 b + 5 T us.
  const RunFn run = [](const Experiment& x) {
    if (x.parallel.tp == 1) return two_layer_run(x, 30);
    const double t = static_cast<double>(x.parallel.tp), f = static_cast<double>(x.parallel.ranks);
    const double mib = (8 + 32 / f) / t + static_cast<double>(x.batch) / t;
    ExperimentResult r;
    r.peak_live_bytes = r.peak_reserved_bytes = static_cast<uint64_t>(mib * kSearchMiB);
    r.oom = mib > 30;
    r.oom_where = r.oom ? "out of memory" : "";
    r.iterations_run = r.oom ? 0 : x.iterations;
    r.iteration_time_us = 1000 * static_cast<double>(x.batch) / t + 5 * t;
    return r;
  };
  const auto layouts = parse_layout_candidates({"fsdp", "fsdp+tp2", "fsdp+tp4"}, "--layouts");
  const LayoutSearch s = search_layouts(base_experiment(), layouts, {1, 2, 4, 6}, run, 1 << 16);
  REQUIRE(s.cells.size() == 12);
  CHECK(s.tp == std::vector<int64_t>{1, 2, 4});
  // tp 2 on 1 GPU and tp 4 on 1, 2 and 6 GPUs are no layouts.
  CHECK(s.cell(1, 0).status == "skipped");
  CHECK(s.cell(2, 0).status == "skipped");
  CHECK(s.cell(2, 1).status == "skipped");
  CHECK(s.cell(2, 3).status == "skipped");
  CHECK(s.cell(2, 3).message == "tp 4 does not divide 6 GPUs");
  CHECK_FALSE(s.any_error());
  // fsdp+tp2 on 2 GPUs (F 1, plain tp): 40 / 2 + 4 = 24 MiB, fits; fsdp on 2: 8 + 16 + 4 = 28.
  CHECK(s.cell(1, 1).fits());
  CHECK(s.cell(1, 1).peak_live_bytes == 24 * kSearchMiB);
  CHECK(s.smallest_gpus(1) == 2);
  CHECK(s.smallest_gpus(2) == 4);  // (8 + 32) / 4 + 4 = 14
  // The largest batch per GPU: fsdp+tp2 on 2 is 30 - 20 = 10 (a data-parallel rank of 20); on 6 (F 3) 30 - (8 +
  // 32/3) / 2 = 20.67, so 20; fsdp+tp4 on 4: 30 - 10 = 20.
  CHECK(s.cell(1, 1).max_batch == 10);
  CHECK(s.cell(1, 3).max_batch == 20);
  CHECK(s.cell(2, 2).max_batch == 20);
  CHECK(s.cell(1, 1).iteration_time_at_max_us == 10 * 1000 + 10);
  // At batch 4 per GPU: fsdp 4040 us, fsdp+tp2 4010, fsdp+tp4 4020: tp 2 is the fastest on 2, 4 and 6.
  CHECK(s.fastest_at(1) == 1);
  CHECK(s.fastest_at(2) == 1);
  CHECK(s.fastest_at(3) == 1);
  const nlohmann::json j = to_json(s);
  CHECK(j["tp"] == nlohmann::json::array({1, 2, 4}));
  CHECK(j["cells"][4]["status"] == "skipped");
  CHECK(j["cells"][4]["skipped_because"] == "tp 2 does not divide 1 GPUs");
  CHECK_FALSE(j["cells"][4].contains("peak_live_bytes"));
  CHECK(j["cells"][5]["samples_per_s_per_gpu"] == Approx(4e6 / 4010.0));
}

TEST_CASE("layout search through the simulator: each cell is the direct run of its layout") {
  const RunFn run = [](const Experiment& x) { return run_experiment(x, nullptr, nullptr, false); };
  const Experiment e = base_experiment();
  const auto layouts = parse_layout_candidates({"dp", "fsdp", "zero1", "zero2"}, "--layouts");
  const LayoutSearch s = search_layouts(e, layouts, {1, 4}, run, 64, false);
  for (size_t i = 0; i < layouts.size(); ++i)
    for (size_t j = 0; j < 2; ++j) {
      CAPTURE(i, j);
      const ExperimentResult r = run_experiment(with_layout(e, layouts[i], s.gpus[j]), nullptr, nullptr, false);
      CHECK(s.cell(i, j).fits() == !r.oom);
      CHECK(s.cell(i, j).peak_live_bytes == r.peak_live_bytes);
      CHECK(s.cell(i, j).iteration_time_us == r.iteration_time_us);
    }
  // One GPU is the plain run under every layout; on 4 the more a layout shards, the less one rank holds.
  for (size_t i = 1; i < layouts.size(); ++i) CHECK(s.cell(i, 0).peak_live_bytes == s.cell(0, 0).peak_live_bytes);
  CHECK(s.cell(1, 1).peak_live_bytes < s.cell(3, 1).peak_live_bytes);  // fsdp < zero2
  CHECK(s.cell(3, 1).peak_live_bytes < s.cell(2, 1).peak_live_bytes);  // zero2 < zero1
  CHECK(s.cell(2, 1).peak_live_bytes < s.cell(0, 1).peak_live_bytes);  // zero1 < dp
  CHECK(to_json(s).dump() == to_json(search_layouts(e, layouts, {1, 4}, run, 64, false)).dump());  // deterministic
}

TEST_CASE("layout search through the simulator with tp: each cell is the direct run of F x T GPUs") {
  const Experiment e = tiny_llama_experiment();
  const RunFn run = [](const Experiment& x) { return run_experiment(x, nullptr, nullptr, false); };
  const auto layouts = parse_layout_candidates({"fsdp", "fsdp+tp2", "fsdp+tp4"}, "--layouts");
  const LayoutSearch s = search_layouts(e, layouts, {2, 8}, run, 64, false);
  for (size_t i = 0; i < layouts.size(); ++i)
    for (size_t j = 0; j < 2; ++j) {
      CAPTURE(i, j);
      if (!layout_fits_count(layouts[i], s.gpus[j])) continue;  // tp 4 on 2 GPUs: checked below
      REQUIRE(s.cell(i, j).fits());
      const Experiment x = with_layout(e, layouts[i], s.gpus[j]);
      CHECK(x.parallel.gpus() == s.gpus[j]);
      const ExperimentResult r = run_experiment(x, nullptr, nullptr, false);
      CHECK(s.cell(i, j).peak_live_bytes == r.peak_live_bytes);
      CHECK(s.cell(i, j).iteration_time_us == r.iteration_time_us);
      // Every candidate trains 2 samples of 64 tokens per GPU an iteration: a tp rank's 2 x T shared by T GPUs.
      REQUIRE(r.parallel_metrics.contains("tokens_per_s_per_gpu"));
      CHECK(r.parallel_metrics["tokens_per_s_per_gpu"].get<double>() == Approx(2 * 64 * 1e6 / r.iteration_time_us));
    }
  CHECK(s.cell(2, 0).status == "skipped");  // tp 4 on 2 GPUs
  // 8 GPUs: tp 4 leaves 2 FSDP ranks, tp 2 leaves 4.
  CHECK(with_layout(e, layouts[2], 8).parallel.ranks == 2);
  CHECK(with_layout(e, layouts[1], 8).parallel.ranks == 4);
}
