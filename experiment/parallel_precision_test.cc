// `precision:` beside FSDP's param_dtype: which pairings compute in bf16 with fp32 shards, which keep the
// experiment's precision, and where each contradictory one's error points.
#include "experiment/parallel_precision.h"

#include <catch2/catch.hpp>

#include "common/config_error.h"
#include "experiment/experiment.h"

using namespace dlsim;

namespace {

const char* pp_kBase = "model: resnet50\nbatch: 32\nhw: h100-sxm\npool: cnmem\nswap: none\nconcurrency: serial\n";

Experiment pp_parse(const std::string& rest) {
  return experiment_from_yaml(YAML::Load(std::string(pp_kBase) + rest), "exp.yaml");
}

}  // namespace

TEST_CASE("FSDP's bf16 param_dtype on an fp32 or autocast model computes in bf16 with fp32 shards") {
  for (const char* precision : {"fp32", "mixed-bf16"}) {
    CAPTURE(precision);
    const Experiment e = pp_parse(std::string("precision: ") + precision + "\nparallel: {fsdp: 8, param_dtype: bf16}\n");
    CHECK(training_options(e).precision == Precision::BF16);
    CHECK(with_shard_dtype(e.parallel, e.precision).shard_dtype == DType::F32);
  }
  // The model in bf16 already: its shards are bf16, nothing changes.
  Experiment e = pp_parse("precision: bf16\nparallel: {fsdp: 8, param_dtype: bf16}\n");
  CHECK(training_options(e).precision == Precision::BF16);
  CHECK_FALSE(with_shard_dtype(e.parallel, e.precision).shard_dtype);
  // Autocast on fp16 gathered parameters stays autocast's graph; fp32 gathers change nothing.
  e = pp_parse("precision: mixed-fp16\nparallel: {fsdp: 8, param_dtype: fp16}\n");
  CHECK(training_options(e).precision == Precision::MixedFP16);
  CHECK_FALSE(with_shard_dtype(e.parallel, e.precision).shard_dtype);
  e = pp_parse("precision: mixed-bf16\nparallel: {fsdp: 8, param_dtype: fp32}\n");
  CHECK(training_options(e).precision == Precision::MixedBF16);
  // Without a policy, and on one rank (no wrapper: the plain run), the experiment's precision.
  e = pp_parse("precision: mixed-bf16\nparallel: {fsdp: 8}\n");
  CHECK(training_options(e).precision == Precision::MixedBF16);
  e = pp_parse("precision: fp32\nparallel: {fsdp: 1, param_dtype: bf16}\n");
  CHECK(training_options(e).precision == Precision::FP32);
  CHECK_FALSE(with_shard_dtype(e.parallel, e.precision).shard_dtype);
}

TEST_CASE("contradictory precision and param_dtype pairings: errors at parallel.param_dtype's line") {
  struct Case {
    const char* rest;
    const char* text;
  };
  const Case cases[] = {
      {"precision: mixed-fp16\nparallel:\n  fsdp: 8\n  param_dtype: bf16\n", "contradict"},
      {"precision: fp32\nparallel:\n  fsdp: 8\n  param_dtype: fp16\n", "loss scaling"},
      {"precision: mixed-bf16\nparallel:\n  fsdp: 8\n  param_dtype: fp16\n", "contradict"},
      {"precision: bf16\nparallel:\n  fsdp: 8\n  param_dtype: fp16\n", "contradict"},
      {"precision: bf16\nparallel:\n  fsdp: 8\n  param_dtype: fp32\n", "upcast"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.rest);
    try {
      pp_parse(c.rest);
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK(e.file() == "exp.yaml");
      CHECK(e.line() == 10);
      CHECK(e.key() == "parallel.param_dtype");
      CHECK(std::string(e.what()).find(c.text) != std::string::npos);
    }
  }
}
