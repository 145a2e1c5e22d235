#include "hw/fitted/fitted_kernels_yaml.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "common/config_error.h"
#include "hw/gpu_spec_file.h"

using namespace dlsim;

namespace {

// configs/hw/h200-datasheet.yaml with `section` appended.
GpuSpec h200_with(const std::string& section) {
  std::ifstream in(std::string(DLSIM_SOURCE_DIR) + "/configs/hw/h200-datasheet.yaml");
  std::ostringstream text;
  text << in.rdbuf() << section;
  return gpu_spec_from_yaml(parse_yaml_text(text.str(), "h200-fitted.yaml"), "h200-fitted.yaml");
}

void check_error(const std::string& section, const std::string& key, const std::string& text) {
  try {
    h200_with(section);
    FAIL("accepted: " << section);
  } catch (const ConfigError& e) {
    INFO(e.what());
    CHECK(e.file() == "h200-fitted.yaml");
    CHECK(e.line() > 90);  // the section's own line, after the file's 95 lines
    CHECK(e.key() == key);
    CHECK_THAT(e.what(), Catch::Contains(text));
  }
}

}  // namespace

TEST_CASE("the fitted section reads back what the writer wrote, and makes the model `fitted`") {
  FittedKernels f;
  f.fitted_from = "sweep.json (NVIDIA H200, 3 records)";
  f.timing = "CUDA events \"median\"";
  f.fixed_includes_dispatch = true;
  f.classes["conv_fwd.tf32.spatial"] = {32.048, 0.276, 0.897, 3.255, 197};
  f.classes["layernorm.bf16"] = {23.06, 0, 0, 2.227, 6};
  f.classes["layernorm.f32"] = {3.1, 0, 0, 0.8, 120, 0, 0, 0.18, 0.42, 3.9};
  f.classes["batchnorm.f32"] = {4.6, 0, 0, 1.9, 2016, 0.35, 0.6};
  f.classes["batchnorm.bf16"] = {4.6, 0, 0, 1.9, 6, 0.35};
  f.classes["maxpool.f32"] = {4.7, 0, 0, 1.5, 164, 0, 0, 0, 0, 3.95, 0.9, 1.53};
  f.classes["concat.f32"] = {0.4, 0, 0, 0.7, 230, 0, 0, 0, 0, 0, 0, 0, 0.075};
  f.classes["multi_tensor.f32"] = {4.62, 0, 0, 0.938, 345, 0, 0, 0, 0, 0, 0, 0, 0, 0.428};
  const std::string yaml = fitted_kernels_to_yaml(f);
  CHECK_THAT(yaml, Catch::Contains("batchnorm.f32: {fixed_us: 4.6, flop_scale: 0, wave_scale: 0, byte_scale: 1.9, "
                                   "channel_scale: 0.35, channel_bwd_scale: 0.6, records: 2016}"));
  CHECK_THAT(yaml, Catch::Contains("batchnorm.bf16: {fixed_us: 4.6, flop_scale: 0, wave_scale: 0, byte_scale: 1.9, "
                                   "channel_scale: 0.35, records: 6}"));  // no backward term: not written
  CHECK_THAT(yaml, Catch::Contains("layernorm.bf16: {fixed_us: 23.06, flop_scale: 0, wave_scale: 0, byte_scale: "
                                   "2.227, records: 6}"));  // no channel term: the key is not written
  CHECK_THAT(yaml, Catch::Contains("layernorm.f32: {fixed_us: 3.1, flop_scale: 0, wave_scale: 0, byte_scale: 0.8, "
                                   "row_scale: 0.18, row_bwd_scale: 0.42, byte_bwd_scale: 3.9, records: 120}"));
  CHECK_THAT(yaml, Catch::Contains("maxpool.f32: {fixed_us: 4.7, flop_scale: 0, wave_scale: 0, byte_scale: 1.5, "
                                   "byte_bwd_scale: 3.95, window_scale: 0.9, window_bwd_scale: 1.53, records: 164}"));
  CHECK_THAT(yaml, Catch::Contains("concat.f32: {fixed_us: 0.4, flop_scale: 0, wave_scale: 0, byte_scale: 0.7, "
                                   "input_scale: 0.075, records: 230}"));
  CHECK_THAT(yaml, Catch::Contains("multi_tensor.f32: {fixed_us: 4.62, flop_scale: 0, wave_scale: 0, byte_scale: "
                                   "0.938, chunk_scale: 0.428, records: 345}"));
  const GpuSpec s = h200_with("\n" + yaml);
  CHECK(s.kernel_model == "fitted");
  CHECK(s.fitted_kernels == f);
}

TEST_CASE("a bad fitted section is refused at its line and key") {
  check_error("kernel_model:\n  classes:\n    conv_fwd.tf32: {fixed_us: 1}\n", "kernel_model.classes.conv_fwd.tf32",
              "not a kernel class");
  check_error("kernel_model:\n  classes:\n    gemm.bf16: {fixed_us: -1}\n", "kernel_model.classes.gemm.bf16.fixed_us",
              "must be in [0, 1e+06], got -1");
  check_error("kernel_model:\n  classes:\n    batchnorm.f32: {fixed_us: 1, channel_bwd_scale: -2}\n",
              "kernel_model.classes.batchnorm.f32.channel_bwd_scale", "must be in [0, 1e+06], got -2");
  check_error("kernel_model:\n  classes:\n    concat.f32: {fixed_us: 1, input_scale: -0.1}\n",
              "kernel_model.classes.concat.f32.input_scale", "must be in [0, 1e+06], got -0.1");
  check_error("kernel_model:\n  classes:\n    multi_tensor.f32: {fixed_us: 1, chunk_scale: -0.5}\n",
              "kernel_model.classes.multi_tensor.f32.chunk_scale", "must be in [0, 1e+06], got -0.5");
  check_error("kernel_model:\n  classes:\n    gemm.bf16: {fixed_us: 1, flop_scale: fast}\n",
              "kernel_model.classes.gemm.bf16.flop_scale", "fast");
  check_error("kernel_model:\n  classes:\n    gemm.bf16: {flop_scale: 1}\n", "kernel_model.classes.gemm.bf16.fixed_us",
              "missing");
  check_error("kernel_model:\n  classes:\n    gemm.bf16: {fixed_us: 1, flops_scale: 1}\n",
              "kernel_model.classes.gemm.bf16.flops_scale", "");
  check_error("kernel_model:\n  tile: 0\n  classes:\n    gemm.bf16: {fixed_us: 1}\n", "kernel_model.tile", "[1, 4096]");
  check_error("kernel_model:\n  fitted_from: x\n", "kernel_model.classes", "missing");
  check_error("kernel_model:\n  fixed_includes_dispatch: often\n  classes:\n    gemm.bf16: {fixed_us: 1}\n",
              "kernel_model.fixed_includes_dispatch", "often");
  check_error("kernel_model: fitted\n", "kernel_model", "the kernel_model mapping itself");
}
