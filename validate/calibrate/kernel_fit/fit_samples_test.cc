#include "validate/calibrate/kernel_fit/fit_samples.h"

#include <catch2/catch.hpp>

using namespace dlsim;

namespace {

// One grouped (not depthwise) convolution, forward, in three dtype/layouts, and an fp32 NCHW depthwise one.
const char* kGroupedSweep = R"({"meta": {"device": "NVIDIA H200"}, "records": [
 {"op": "conv_fwd", "n": 32, "c": 128, "h": 28, "w": 28, "k": 128, "r": 3, "s": 3, "stride": 1, "pad": 1,
  "groups": 32, "dtype": "float32", "layout": "nchw", "us": 90.0},
 {"op": "conv_fwd", "n": 32, "c": 128, "h": 28, "w": 28, "k": 128, "r": 3, "s": 3, "stride": 1, "pad": 1,
  "groups": 32, "dtype": "float16", "layout": "nhwc", "us": 40.0},
 {"op": "conv_fwd", "n": 32, "c": 128, "h": 28, "w": 28, "k": 128, "r": 3, "s": 3, "stride": 1, "pad": 1,
  "groups": 32, "dtype": "float32", "layout": "nhwc", "us": 60.0},
 {"op": "conv_fwd", "n": 32, "c": 128, "h": 28, "w": 28, "k": 128, "r": 3, "s": 3, "stride": 1, "pad": 1,
  "groups": 128, "dtype": "float32", "layout": "nchw", "us": 50.0, "src": "model:mobilenet_v2-b64"}
]})";

}  // namespace

TEST_CASE("an fp32 NCHW grouped convolution's record, whose time holds cuDNN's transposes, is left out and said so") {
  std::vector<std::string> notes;
  const std::vector<FitSample> s = fit_samples(kernel_sweep_from_text(kGroupedSweep, "grouped.json"), notes);
  REQUIRE(s.size() == 3);
  CHECK(s[0].record == 1);
  CHECK(s[0].cls == "conv_fwd.fp16.grouped");
  CHECK(s[1].record == 2);  // channels_last: cuDNN runs it in the tensors' own layout, no transposes
  CHECK(s[1].cls == "conv_fwd.tf32.grouped");
  CHECK(s[2].record == 3);  // depthwise in NCHW: PyTorch's own kernel, no transposes either
  CHECK(s[2].cls == "conv_fwd.tf32.depthwise");
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Catch::Contains("grouped.json: 1 fp32 NCHW grouped convolution records left out"));
}

TEST_CASE("a record's model is its zoo model, without the batch or the pass a sweep adds to its src") {
  std::string text = R"({"records": [
   {"op": "gemm", "m": 64, "n": 64, "k": 64, "dtype": "bf16", "us": 9.0, "src": "model:qwen2.5-0.5b:wgrad"},
   {"op": "gemm", "m": 64, "n": 64, "k": 64, "dtype": "bf16", "us": 9.0, "src": "model:mobilenet_v2"},
   {"op": "gemm", "m": 64, "n": 64, "k": 64, "dtype": "bf16", "us": 9.0, "src": "model:mobilenet_v2-b64"},
   {"op": "gemm", "m": 64, "n": 64, "k": 64, "dtype": "bf16", "us": 9.0, "src": "model:resnet50-bx"},
   {"op": "gemm", "m": 64, "n": 64, "k": 64, "dtype": "bf16", "us": 9.0, "src": "random"}]})";
  std::vector<std::string> notes;
  const std::vector<FitSample> s = fit_samples(kernel_sweep_from_text(text, "models.json"), notes);
  REQUIRE(s.size() == 5);
  CHECK(s[0].model == "qwen2.5-0.5b");
  CHECK(s[1].model == "mobilenet_v2");
  CHECK(s[2].model == "mobilenet_v2");
  CHECK(s[3].model == "resnet50-bx");  // not a batch
  CHECK(s[4].model.empty());
}

TEST_CASE("an fp32 attention record is the memory-efficient kernel's: the TF32 class, three TF32 products a product") {
  std::vector<std::string> notes;
  const std::vector<FitSample> s = fit_samples(kernel_sweep_from_text(R"({"records": [
   {"op": "sdpa_fwd", "b": 32, "heads": 12, "seq": 197, "d": 64, "causal": false, "dtype": "float32", "us": 201.0},
   {"op": "sdpa_fwd_bwd", "b": 32, "heads": 12, "seq": 197, "d": 64, "causal": false, "dtype": "float32",
    "us": 657.0},
   {"op": "sdpa_fwd", "b": 32, "heads": 12, "seq": 197, "d": 64, "causal": false, "dtype": "bfloat16", "us": 20.0}
  ]})", "fp32-sdpa.json"), notes);
  CHECK(notes.empty());
  REQUIRE(s.size() == 3);
  const double fwd = 4.0 * 32 * 12 * 197 * 197 * 64;
  CHECK(s[0].cls == "sdpa_fwd.tf32");
  CHECK(s[0].shape.flops == Approx(3 * fwd));
  CHECK(s[1].cls == "sdpa_bwd.tf32");
  CHECK(s[1].us == Approx(456.0));  // the forward and backward less the forward
  CHECK(s[1].shape.flops == Approx(3 * 2.5 * fwd));
  CHECK(s[2].cls == "sdpa_fwd.bf16");  // 16-bit attention stays flash: its own flops
  CHECK(s[2].shape.flops == Approx(fwd));
}
