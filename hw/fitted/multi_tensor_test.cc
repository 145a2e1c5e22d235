// The optimizer's foreach passes priced as multi_tensor_apply's launches (hw/fitted/multi_tensor.h): by hand, per
// tensor as the zoo's updates are charged, and on the zoo's ResNet-50, whose launches must be the ones the H200's
// profiled step ran (results/fidelity/membound-kernels.md: 161 tensors, 3 launches a pass of one or two lists).
#include "hw/fitted/multi_tensor.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

#include "hw/fitted/fitted_cost_model.h"
#include "hw/fitted/kernel_terms.h"
#include "hw/fitted/op_kernel_shapes.h"
#include "hw/op_signature.h"
#include "hw/roofline.h"
#include "hw/testing/fixtures.h"
#include "workloads/multi_tensor_apply.h"
#include "workloads/training.h"
#include "workloads/zoo.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

const FittedKernelClass kClass = [] {  // fixed_us, byte_scale, chunk_scale
  FittedKernelClass c{4.0, 0, 0, 1.0, 345};
  c.chunk_scale = 0.5;
  return c;
}();

GpuSpec multi_tensor_spec() {
  GpuSpec s = round_spec();  // 100 SMs, 1e12 B/s
  s.kernel_model = "fitted";
  s.fitted_kernels.classes["multi_tensor.f32"] = kClass;
  return s;
}

}  // namespace

TEST_CASE("a foreach pass is its launches, each fixed_us + byte_scale * B + chunk_scale * K") {
  const GpuSpec s = multi_tensor_spec();
  // 480 full chunks and 7 elements, then 10 elements, over two lists moving 12 bytes an element: launches of 320
  // chunks, then 162 (160 full, the 7 and the 10); both with a full chunk as the largest.
  const std::vector<int64_t> numels{480 * kMultiTensorChunk + 7, 10};
  const auto shapes = multi_tensor_pass_shapes(numels, 2, DType::F32, 12);
  REQUIRE(shapes.size() == 2);
  CHECK(shapes[0].bytes == 320.0 * kMultiTensorChunk * 12);
  CHECK(shapes[1].bytes == (160.0 * kMultiTensorChunk + 17) * 12);
  CHECK(shapes[1].chunk_bytes == kMultiTensorChunk * 12.0);
  CHECK(class_candidates(shapes[0]).front() == "multi_tensor.f32");
  const double b_us = (480.0 * kMultiTensorChunk + 17) * 12 / 1e12 * 1e6;
  const double k_us = kMultiTensorChunk * 12.0 * 100 / 1e12 * 1e6;  // one SM's share: a hundredth
  const double by_hand = 2 * 4.0 + 1.0 * b_us + 0.5 * 2 * k_us;
  CHECK(multi_tensor_pass_us(kClass, s, s.fitted_kernels, numels, 2, DType::F32, 12) == Approx(by_hand));
}

TEST_CASE("ops charged per tensor with the launches each closes sum to the pass") {
  const GpuSpec s = multi_tensor_spec();
  std::vector<int64_t> numels;
  for (int i = 0; i < 150; ++i) numels.push_back(i % 3 == 0 ? 3 * kMultiTensorChunk + i : 64 + i);
  for (int lists = 1; lists <= 3; ++lists) {
    const int64_t per_element = 4 * (lists + 1);
    const auto charges = multi_tensor_charges(numels, lists, per_element);
    double sum = 0;
    for (size_t i = 0; i < numels.size(); ++i)
      sum += class_time_us(kClass, kernel_terms(multi_tensor_charged_shape(
                                                    DType::F32, static_cast<double>(numels[i] * per_element),
                                                    static_cast<double>(charges[i].launches),
                                                    static_cast<double>(charges[i].chunk_bytes)),
                                                s, s.fitted_kernels));
    INFO("lists " << lists);
    CHECK(sum == Approx(multi_tensor_pass_us(kClass, s, s.fitted_kernels, numels, lists, DType::F32, per_element)));
  }
  // A shape of no launch has its bytes alone: no fixed cost, no chunk.
  const KernelShape none = multi_tensor_charged_shape(DType::F32, 1e6, 0, 0);
  CHECK(class_time_us(kClass, kernel_terms(none, s, s.fitted_kernels)) == Approx(1e6 / 1e12 * 1e6));
}

TEST_CASE("the zoo's eager SGD: ResNet-50's passes as the profiled step's launches, by the class or the roofline") {
  ModelOptions mo;
  mo.batch = 2;
  const Graph g = build_training_graph("resnet50", mo);
  std::vector<int64_t> numels;
  int64_t launches = 0;
  std::vector<const Op*> updates;
  for (const Op& op : g.ops()) {
    if (op.kind != OpKind::SgdMomentumUpdate) continue;
    CHECK(op.attr(Attr::foreach_bytes) == 8 * static_cast<int64_t>(g.tensor(op.inputs[0]).bytes));
    numels.push_back(numel(g.tensor(op.inputs[0]).shape));
    launches += op.attr(Attr::launches);
    updates.push_back(&op);
  }
  // torchvision's ResNet-50 in its parameters' order: 161 tensors, 25.56 M elements; momentum SGD without weight
  // decay: _foreach_mul_ (one list) and two _foreach_add_ (two lists), 3 launches each (membound_kernels.py)
  REQUIRE(numels.size() == 161);
  CHECK(std::accumulate(numels.begin(), numels.end(), int64_t{0}) == 25557032);
  CHECK(multi_tensor_launches(numels, 1).size() == 3);
  CHECK(multi_tensor_launches(numels, 2).size() == 3);
  CHECK(launches == 9);
  // With the class: the updates sum to the three passes' launches. Without: each is the roofline's, as before.
  const GpuSpec with = multi_tensor_spec();
  FittedCostModel fitted(with, round_roofline());
  double sum_us = 0;
  for (const Op* op : updates) sum_us += static_cast<double>(fitted.cost(g, *op).duration_ns) / 1e3;
  const double passes = multi_tensor_pass_us(kClass, with, with.fitted_kernels, numels, 1, DType::F32, 8) +
                        2 * multi_tensor_pass_us(kClass, with, with.fitted_kernels, numels, 2, DType::F32, 12);
  CHECK(sum_us == Approx(passes).epsilon(1e-4));
  GpuSpec without = with;
  without.fitted_kernels.classes.clear();
  without.fitted_kernels.classes["elementwise.f32"] = kClass;
  FittedCostModel other(without, round_roofline());
  RooflineCostModel roofline(without, round_roofline());
  for (const Op* op : updates) CHECK(other.cost(g, *op).duration_ns == roofline.cost(g, *op).duration_ns);
  CHECK_FALSE(op_kernel_shapes(without, g, *updates.front()));
  // The charge is pricing, not the kernel: the signature is the fused update's, as a harness table keys it.
  CHECK_THAT(op_signature(g, *updates.front()), Catch::EndsWith(" attrs="));
}
