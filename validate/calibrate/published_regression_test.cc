#include "validate/calibrate/published_regression.h"

#include <catch2/catch.hpp>

#include "hw/gpu_spec_file.h"
#include "workloads/zoo.h"

using namespace dlsim;

namespace {

PointModel model_of(const std::string& model, int64_t batch, Precision p, Tf32 t, const std::string& hw) {
  ModelOptions o;
  o.batch = batch;
  if (model.rfind("bert", 0) == 0) o.seq_len = 128;
  o.training.precision = p;
  o.training.tf32 = t;
  o.training.memory_format = MemoryFormat::NHWC;
  const GpuSpec spec = load_gpu_spec(resolve_hw_path(hw));
  return point_model(build_training_graph(model, o), RooflineCostModel(spec, RooflineOptions{}));
}

}  // namespace

TEST_CASE("the fit recovers the efficiencies that made the iteration times") {
  // Synthetic "published" points: a CNN and a transformer at two precisions on an A100, timed by known
  // efficiencies; the fit must find them again from the times alone.
  std::vector<PointModel> models = {
      model_of("resnet50", 64, Precision::FP32, Tf32::All, "a100-sxm-40gb"),
      model_of("resnet50", 64, Precision::MixedFP16, Tf32::All, "a100-sxm-40gb"),
      model_of("resnext101-32x4d", 32, Precision::FP32, Tf32::All, "a100-sxm-40gb"),
      model_of("resnext101-32x4d", 32, Precision::MixedFP16, Tf32::All, "a100-sxm-40gb"),
      model_of("bert-base-squad", 8, Precision::FP32, Tf32::All, "a100-sxm-40gb"),
      model_of("bert-base-squad", 8, Precision::MixedFP16, Tf32::All, "a100-sxm-40gb"),
  };
  RegressionSetup s;
  ClassEfficiencies truth;
  for (size_t i = 0; i < 3; ++i) {  // the three convolution classes, tied as the fit ties them
    truth.compute[i][static_cast<size_t>(MathPath::Tf32)] = 0.25;
    truth.compute[i][static_cast<size_t>(MathPath::Fp16)] = 0.45;
  }
  truth.compute[3][static_cast<size_t>(MathPath::Tf32)] = 0.5;   // gemm
  truth.compute[3][static_cast<size_t>(MathPath::Fp16)] = 0.4;
  for (double& m : truth.memory) m = 0.7;
  std::vector<const PointModel*> ptrs;
  std::vector<double> measured;
  for (const PointModel& m : models) {
    ptrs.push_back(&m);
    measured.push_back(predict_ns(m, truth, s));
  }
  s.prior_weight = 0;  // exact data: nothing to regularise
  const RegressedEfficiencies f = regress_efficiencies(ptrs, measured, s);
  CHECK(f.values.at("conv_tf32") == Approx(0.25).epsilon(0.01));
  CHECK(f.values.at("conv_fp16") == Approx(0.45).epsilon(0.01));
  CHECK(f.values.at("gemm_tf32") == Approx(0.5).epsilon(0.02));
  CHECK(f.values.at("gemm_fp16") == Approx(0.4).epsilon(0.02));
  CHECK(f.values.at("memory") == Approx(0.7).epsilon(0.01));
  CHECK(f.objective < 1e-6);
  // No point runs on the CUDA cores: that path is not fitted and stays unset.
  CHECK(f.values.count("conv_cuda_core") == 0);
  for (size_t k = 0; k < ptrs.size(); ++k) CHECK(predict_ns(*ptrs[k], f.classes, s) == Approx(measured[k]).epsilon(0.005));
}

TEST_CASE("a GEMM parameter without data stays unset, or takes the convolutions' value when tied") {
  std::vector<PointModel> models = {model_of("resnet50", 64, Precision::FP32, Tf32::All, "a100-sxm-40gb"),
                                    model_of("resnet50", 64, Precision::MixedFP16, Tf32::All, "a100-sxm-40gb")};
  std::vector<const PointModel*> ptrs = {&models[0], &models[1]};
  RegressionSetup s;
  std::vector<double> measured = {predict_ns(models[0], {}, s) * 1.5, predict_ns(models[1], {}, s) * 1.2};
  const RegressedEfficiencies untied = regress_efficiencies(ptrs, measured, s);
  CHECK(untied.values.count("gemm_tf32") == 0);  // the classifier holds far under 1 % of the time
  CHECK(untied.values.count("conv_tf32") == 1);
  CHECK(untied.fitted.at("conv_tf32"));
  s.tie_gemm_to_conv = true;
  const RegressedEfficiencies tied = regress_efficiencies(ptrs, measured, s);
  REQUIRE(tied.values.count("gemm_tf32") == 1);
  CHECK_FALSE(tied.fitted.at("gemm_tf32"));
  CHECK(tied.values.at("gemm_tf32") == tied.values.at("conv_tf32"));
}

TEST_CASE("identical ops are counted once with their multiplicity") {
  const PointModel m = model_of("bert-base-squad", 4, Precision::FP32, Tf32::Conv, "h100-sxm-datasheet");
  double ops = 0;
  for (const OpFeature& f : m.ops) ops += f.count;
  CHECK(ops == m.kernels);
  CHECK(m.ops.size() < m.kernels / 5);  // 12 identical layers
}
