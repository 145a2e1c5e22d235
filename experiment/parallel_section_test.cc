// The `parallel:` section: what it reads and where each bad input's error points.
#include "experiment/parallel_section.h"

#include <catch2/catch.hpp>

#include "common/config_error.h"
#include "experiment/experiment.h"

using namespace dlsim;
using parallel::FsdpWrap;
using parallel::Layout;

namespace {

const char* section_kBase = "model: resnet50\nbatch: 32\nhw: h100-sxm\npool: cnmem\nswap: none\nconcurrency: serial\n";

Experiment section_parse(const std::string& section) {
  return experiment_from_yaml(YAML::Load(std::string(section_kBase) + section), "exp.yaml");
}

// The error of `section` (written from line 7 on).
ConfigError section_error_of(const std::string& section) {
  try {
    section_parse(section);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError for:\n" << section);
  throw std::logic_error("unreachable");
}

bool section_says(const ConfigError& e, const std::string& text) {
  return std::string(e.what()).find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("parallel: absent is the plain run") {
  const Experiment e = section_parse("");
  CHECK(e.parallel.layout == Layout::Single);
  CHECK(e.parallel.is_single());
  CHECK(e.parallel.label() == "single");
}

TEST_CASE("parallel: dp, fsdp and zero with their options") {
  Experiment e = section_parse("parallel: {dp: 8}\n");
  CHECK(e.parallel.layout == Layout::Ddp);
  CHECK(e.parallel.ranks == 8);
  CHECK(e.parallel.bucket_cap_mb == 25);
  CHECK(e.parallel.label() == "dp=8");
  CHECK(e.parallel.line == 7);

  e = section_parse("parallel: {fsdp: 64}\n");
  CHECK(e.parallel.layout == Layout::Fsdp);
  CHECK(e.parallel.reshard_after_forward);
  CHECK(e.parallel.wrap == FsdpWrap::Blocks);
  CHECK_FALSE(e.parallel.param_dtype);
  CHECK(e.parallel.label() == "fsdp=64");

  e = section_parse("parallel:\n  fsdp: 4\n  reshard_after_forward: false\n  wrap: root\n  param_dtype: bf16\n  reduce_dtype: fp32\n");
  CHECK_FALSE(e.parallel.reshard_after_forward);
  CHECK(e.parallel.wrap == FsdpWrap::Root);
  CHECK(*e.parallel.param_dtype == DType::BF16);
  CHECK(*e.parallel.reduce_dtype == DType::F32);
  CHECK(e.parallel.label() == "fsdp=4(reshard_after_forward=false,wrap=root,param_dtype=bf16,reduce_dtype=fp32)");

  e = section_parse("parallel: {zero: 2, dp: 16, bucket_cap_mb: 50}\n");
  CHECK(e.parallel.layout == Layout::Zero);
  CHECK(e.parallel.zero_stage == 2);
  CHECK(e.parallel.ranks == 16);
  CHECK(e.parallel.label() == "zero2,dp=16(bucket_cap_mb=50)");

  e = section_parse("parallel: {fsdp: 1}\n");
  CHECK(e.parallel.is_single());
  e = section_parse("parallel: {dp: 1048576}\n");
  CHECK(e.parallel.ranks == 1048576);
}

TEST_CASE("parallel: bad input names the field and its line") {
  struct Case {
    std::string section;
    int line;
    std::string key;
    std::string text;
  };
  const std::vector<Case> cases = {
      {"parallel: {dp: 0}\n", 7, "parallel.dp", "between 1 and 1048576"},
      {"parallel: {fsdp: 1048577}\n", 7, "parallel.fsdp", "between 1 and 1048576"},
      {"parallel: {dp: -2}\n", 7, "parallel.dp", "got -2"},
      {"parallel: {dp: eight}\n", 7, "parallel.dp", "integer"},
      {"parallel: {dp: 8, dpp: 2}\n", 7, "parallel.dpp", "unknown key"},
      {"parallel: {fsdp: 4, sequence_parallel: true}\n", 7, "parallel.sequence_parallel", "tp only"},
      {"parallel: {dp: 4, tp_across_nodes: true}\n", 7, "parallel.tp_across_nodes", "tp only"},
      {"parallel: {tp: 2, bucket_cap_mb: 10}\n", 7, "parallel.bucket_cap_mb", "data-parallel layout"},
      {"parallel: {tp: 2, wrap: root}\n", 7, "parallel.wrap", "data-parallel layout"},
      {"parallel: {fsdp: 1048576, tp: 2}\n", 7, "parallel.tp", "x tp = 2097152"},
      {"parallel: {tp: 2, sequence_parallel: maybe}\n", 7, "parallel.sequence_parallel", "boolean"},
      {"parallel: {dp: 4, tp: 0}\n", 7, "parallel.tp", "between 1 and"},
      {"parallel: {dp: 4, fsdp: 4}\n", 7, "parallel.fsdp", "not both"},
      {"parallel: {zero: 1}\n", 7, "parallel.zero", "dp: N"},
      {"parallel: {zero: 3, dp: 8}\n", 7, "parallel.zero", "fsdp"},
      {"parallel: {zero: 4, dp: 8}\n", 7, "parallel.zero", "must be 1"},
      {"parallel: {zero: 2, fsdp: 8}\n", 7, "parallel.zero", "fsdp"},
      {"parallel: {}\n", 7, "parallel", "names no layout"},
      {"parallel: 8\n", 7, "parallel", "expected a mapping"},
      {"parallel:\n  fsdp: 8\n  param_dtype: float8\n", 9, "parallel.param_dtype", "valid: fp32, bf16, fp16"},
      {"parallel:\n  fsdp: 8\n  wrap: layers\n", 9, "parallel.wrap", "valid: blocks"},
      {"parallel:\n  dp: 8\n  reshard_after_forward: false\n", 9, "parallel.reshard_after_forward", "fsdp only"},
      {"parallel:\n  fsdp: 8\n  bucket_cap_mb: 10\n", 9, "parallel.bucket_cap_mb", "dp and zero only"},
      {"parallel:\n  dp: 8\n  bucket_cap_mb: 0\n", 9, "parallel.bucket_cap_mb", "between 1 and"},
      {"parallel:\n  fsdp: 8\n  reshard_after_forward: maybe\n", 9, "parallel.reshard_after_forward", "boolean"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.section);
    const ConfigError e = section_error_of(c.section);
    CHECK(e.file() == "exp.yaml");
    CHECK(e.line() == c.line);
    CHECK(e.key() == c.key);
    CHECK(section_says(e, c.text));
  }
}

TEST_CASE("parallel: tp alone and composed, with its options") {
  auto llama = [](const std::string& section) {
    return experiment_from_yaml(YAML::Load("model: llama3-8b\nbatch: 1\nhw: h100-sxm\npool: cnmem\nswap: none\n"
                                           "concurrency: serial\n" + section), "exp.yaml");
  };
  Experiment e = llama("parallel: {tp: 8, sequence_parallel: true}\n");
  CHECK(e.parallel.layout == Layout::Single);
  CHECK(e.parallel.tp == 8);
  CHECK(e.parallel.sequence_parallel);
  CHECK_FALSE(e.parallel.is_single());
  CHECK(e.parallel.data_parallel_single());
  CHECK(e.parallel.gpus() == 8);
  CHECK(e.parallel.label() == "tp=8(sequence_parallel)");

  e = llama("parallel: {fsdp: 64, tp: 8}\n");
  CHECK(e.parallel.layout == Layout::Fsdp);
  CHECK(e.parallel.ranks == 64);
  CHECK(e.parallel.gpus() == 512);
  CHECK(e.parallel.label() == "fsdp=64,tp=8");

  e = llama("parallel: {dp: 2, tp: 16, tp_across_nodes: true}\n");
  CHECK(e.parallel.layout == Layout::Ddp);
  CHECK(e.parallel.tp_across_nodes);
  CHECK(e.parallel.label() == "dp=2,tp=16(tp_across_nodes)");

  e = llama("parallel: {fsdp: 1, tp: 1}\n");
  CHECK(e.parallel.is_single());
  // tp is the parallel: section's only: the model section has no such key.
  CHECK_THROWS_WITH(llama("tp: 8\n"), Catch::Contains("tp"));
  // A model built whole: at the section's line.
  try {
    section_parse("parallel: {fsdp: 2, tp: 2}\n");
    FAIL("resnet50 with tp was accepted");
  } catch (const ConfigError& x) {
    CHECK(x.key() == "parallel.tp");
    CHECK(x.line() == 7);
    CHECK(section_says(x, "Llama family only"));
  }
}
