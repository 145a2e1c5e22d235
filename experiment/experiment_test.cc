#include <catch2/catch.hpp>

#include "experiment/experiment.h"
#include "common/config_error.h"

using namespace dlsim;

namespace {
// Parses `text` as if it were file "exp.yaml" and returns the error it raises.
ConfigError error_of(const std::string& text) {
  try {
    experiment_from_yaml(YAML::Load(text), "exp.yaml");
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError for:\n" << text);
  throw std::logic_error("unreachable");
}
const char* kGood =
    "model: resnet50\nbatch: 32\nhw: h100-sxm\npool: cnmem\nswap: none\nconcurrency: serial\niterations: 3\n";
}  // namespace

TEST_CASE("the flat experiment form parses") {
  Experiment e = experiment_from_yaml(YAML::Load(kGood), "exp.yaml");
  CHECK(e.model == "resnet50");
  CHECK(e.batch == 32);
  CHECK(e.hw == "h100-sxm");
  CHECK(e.pool.name == "cnmem");
  CHECK(e.pool.label() == "cnmem");
  CHECK(e.swap.name == "none");
  CHECK(e.concurrency.name == "serial");
  CHECK(e.iterations == 3);
}

TEST_CASE("a pool with parameters") {
  Experiment e = experiment_from_yaml(
      YAML::Load("model: vgg16\nbatch: 8\nhw: h100-sxm\npool: {name: cnmem, init_size_mb: 256}\nswap: none\n"
                 "concurrency: serial\n"),
      "exp.yaml");
  CHECK(e.pool.params.get_int("init_size_mb") == 256);
  CHECK(e.pool.non_default());
  CHECK(e.pool.label() == "cnmem(init_size_mb=256)");
  CHECK(e.iterations == 3);  // the stated default
}

TEST_CASE("bad experiment files name the file, line and key") {
  SECTION("unknown key") {
    auto e = error_of(std::string(kGood) + "bacth: 4\n");
    CHECK(e.line() == 8);
    CHECK(e.key() == "bacth");
    CHECK(std::string(e.what()).find("valid keys: model, batch") != std::string::npos);
  }
  SECTION("missing key") {
    auto e = error_of("model: resnet50\nhw: h100-sxm\npool: cnmem\nswap: none\nconcurrency: serial\n");
    CHECK(e.key() == "batch");
    CHECK(std::string(e.what()).find("missing required key") != std::string::npos);
  }
  SECTION("wrong type") {
    auto e = error_of("model: resnet50\nbatch: thirty\nhw: h100-sxm\npool: cnmem\nswap: none\nconcurrency: serial\n");
    CHECK(e.line() == 2);
    CHECK(e.key() == "batch");
    CHECK(std::string(e.what()).find("expected an integer, got 'thirty'") != std::string::npos);
  }
  SECTION("unknown model lists the zoo") {
    auto e = error_of("model: resnet51\nbatch: 1\nhw: h100-sxm\npool: cnmem\nswap: none\nconcurrency: serial\n");
    CHECK(e.line() == 1);
    CHECK(std::string(e.what()).find("valid: ") != std::string::npos);
    CHECK(std::string(e.what()).find("resnet50") != std::string::npos);
  }
  SECTION("unknown hardware lists the files") {
    auto e = error_of("model: resnet50\nbatch: 1\nhw: h1000\npool: cnmem\nswap: none\nconcurrency: serial\n");
    CHECK(e.key() == "hw");
    CHECK(std::string(e.what()).find("h100-sxm") != std::string::npos);
  }
  SECTION("unknown pool lists the pools") {
    auto e = error_of("model: resnet50\nbatch: 1\nhw: h100-sxm\npool: cnmen\nswap: none\nconcurrency: serial\n");
    CHECK(e.line() == 4);
    CHECK(e.key() == "pool");
    CHECK(std::string(e.what()).find("valid: cuda-malloc, cnmem") != std::string::npos);
  }
  SECTION("unknown pool parameter lists the parameters") {
    auto e = error_of("model: resnet50\nbatch: 1\nhw: h100-sxm\npool: {name: cnmem, size: 3}\nswap: none\n"
                      "concurrency: serial\n");
    CHECK(e.key() == "pool.size");
    CHECK(std::string(e.what()).find("init_size_mb") != std::string::npos);
  }
  SECTION("a pool parameter out of its range") {
    auto e = error_of("model: resnet50\nbatch: 1\nhw: h100-sxm\npool: {name: pytorch-caching,\n"
                      "  max_split_size_mb: 10}\nswap: none\nconcurrency: serial\n");
    CHECK(std::string(e.what()) == "exp.yaml:5: 'pool.max_split_size_mb': must be 0 or in [20, 1073741824], got 10");
  }
  SECTION("negative batch") {
    auto e = error_of("model: resnet50\nbatch: -1\nhw: h100-sxm\npool: cnmem\nswap: none\nconcurrency: serial\n");
    CHECK(e.key() == "batch");
  }
  SECTION("not a mapping") {
    auto e = error_of("- model\n- batch\n");
    CHECK(std::string(e.what()).find("expected a mapping") != std::string::npos);
  }
}

TEST_CASE("precision, tf32, memory format and kernels parse, with PyTorch's defaults when absent") {
  Experiment d = experiment_from_yaml(YAML::Load(kGood), "exp.yaml");
  CHECK(d.precision == Precision::FP32);
  CHECK(d.tf32 == Tf32::Conv);
  CHECK(d.memory_format == MemoryFormat::NCHW);
  CHECK(d.kernels == Kernels::Eager);
  Experiment e = experiment_from_yaml(
      YAML::Load(std::string(kGood) + "precision: mixed-fp16\ntf32: all\nmemory_format: nhwc\nkernels: fused\n"),
      "exp.yaml");
  CHECK(e.precision == Precision::MixedFP16);
  CHECK(e.tf32 == Tf32::All);
  CHECK(e.memory_format == MemoryFormat::NHWC);
  CHECK(e.kernels == Kernels::Fused);
  const ConfigError p = error_of(std::string(kGood) + "precision: fp8\n");
  CHECK(p.key() == "precision");
  CHECK(p.line() == 8);
  CHECK_THAT(p.what(), Catch::Contains("valid: fp32, mixed-fp16, mixed-bf16, bf16"));
  CHECK_THAT(error_of(std::string(kGood) + "tf32: yes\n").what(), Catch::Contains("valid: off, conv, all"));
  CHECK(error_of(std::string(kGood) + "memory_format: chwn\n").key() == "memory_format");
  CHECK(error_of(std::string(kGood) + "kernels: jit\n").key() == "kernels");
}

TEST_CASE("weight_decay: none by default, SGD's alone, a fraction") {
  CHECK(experiment_from_yaml(YAML::Load(kGood), "exp.yaml").weight_decay == 0);
  const Experiment e = experiment_from_yaml(YAML::Load(std::string(kGood) + "weight_decay: 1e-4\n"), "exp.yaml");
  CHECK(e.weight_decay == 1e-4);
  CHECK(training_options(e).weight_decay == 1e-4);
  CHECK_THAT(error_of(std::string(kGood) + "weight_decay: -1\n").what(), Catch::Contains("must be in [0, 1)"));
  const ConfigError adam = error_of(std::string(kGood) + "optimizer: adamw\nweight_decay: 0.01\n");
  CHECK(adam.key() == "weight_decay");
  CHECK_THAT(adam.what(), Catch::Contains("SGD's L2 decay"));
}

TEST_CASE("launch: eager by default, cuda-graph on request, anything else named with the valid values") {
  CHECK(experiment_from_yaml(YAML::Load(kGood), "exp.yaml").launch == LaunchMode::Eager);
  CHECK(experiment_from_yaml(YAML::Load(std::string(kGood) + "launch: cuda-graph\n"), "exp.yaml").launch ==
        LaunchMode::CudaGraph);
  const ConfigError e = error_of(std::string(kGood) + "launch: graph\n");
  CHECK(e.key() == "launch");
  CHECK(e.line() == 8);
  CHECK_THAT(e.what(), Catch::Contains("valid: eager, cuda-graph"));
}

TEST_CASE("sync_every_step: off by default, a boolean, anything else named at its line") {
  CHECK_FALSE(experiment_from_yaml(YAML::Load(kGood), "exp.yaml").sync_every_step);
  CHECK(experiment_from_yaml(YAML::Load(std::string(kGood) + "sync_every_step: true\n"), "exp.yaml").sync_every_step);
  const ConfigError e = error_of(std::string(kGood) + "sync_every_step: sometimes\n");
  CHECK(e.key() == "sync_every_step");
  CHECK(e.line() == 8);
}

TEST_CASE("attention: the model's default when absent, eager or sdpa-flash, anything else named with the valid values") {
  const std::string llama =
      "model: qwen2.5-0.5b\nbatch: 1\nseq_len: 64\nhw: h100-sxm\npool: cnmem\nswap: none\nconcurrency: serial\n";
  CHECK_FALSE(experiment_from_yaml(YAML::Load(llama), "exp.yaml").attention.has_value());
  CHECK(experiment_from_yaml(YAML::Load(llama + "attention: eager\n"), "exp.yaml").attention == Attention::Eager);
  CHECK(experiment_from_yaml(YAML::Load(llama + "attention: sdpa-flash\n"), "exp.yaml").attention ==
        Attention::SdpaFlash);
  const ConfigError e = error_of(llama + "attention: flash\n");
  CHECK(e.key() == "attention");
  CHECK(e.line() == 8);
  CHECK_THAT(e.what(), Catch::Contains("valid: eager, sdpa-flash"));
  // A CNN has no attention: any mode is refused with the file's line; a transformer built with eager attention
  // only refuses sdpa-flash.
  const ConfigError cnn = error_of(std::string(kGood) + "attention: sdpa-flash\n");
  CHECK(cnn.key() == "attention");
  CHECK_THAT(cnn.what(), Catch::Contains("is an image model: attention means nothing to it"));
  const std::string gpt2 = "model: gpt2-small\nbatch: 1\nhw: h100-sxm\npool: cnmem\nswap: none\nconcurrency: serial\n";
  CHECK(experiment_from_yaml(YAML::Load(gpt2 + "attention: eager\n"), "exp.yaml").attention == Attention::Eager);
  CHECK(experiment_from_yaml(YAML::Load(gpt2 + "attention: sdpa-flash\n"), "exp.yaml").attention == Attention::SdpaFlash);
  const std::string bert = "model: bert-base\nbatch: 1\nhw: h100-sxm\npool: cnmem\nswap: none\nconcurrency: serial\n";
  const ConfigError flash = error_of(bert + "attention: sdpa-flash\n");
  CHECK(flash.line() == 7);
  CHECK_THAT(flash.what(), Catch::Contains("eager attention only"));
}
