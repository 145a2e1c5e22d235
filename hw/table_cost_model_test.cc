#include "hw/table_cost_model.h"

#include <catch2/catch.hpp>

#include "hw/hardware.h"
#include "hw/op_signature.h"
#include "hw/testing/fixtures.h"

using namespace dlsim;
using namespace dlsim::testing;

TEST_CASE("measured ops take their table time, others fall back to the roofline") {
  Graph g;
  TensorId x = add_tensor(g, "x", DType::F32, {1 << 20});
  TensorId y = add_tensor(g, "y", DType::F32, {1 << 20});
  OpId relu = add_op(g, OpKind::Relu, {x}, {y}, 1e6, 4 << 20, 4 << 20);
  OpId gelu = add_op(g, OpKind::Gelu, {x}, {y}, 1e7, 4 << 20, 4 << 20);
  OpId view = add_op(g, OpKind::Flatten, {x}, {y}, 0, 0, 0);

  GpuSpec s = round_spec();
  s.kernel_times[op_signature(g, g.op(relu))] = 4321;
  TableCostModel table(s, round_roofline());
  RooflineCostModel roofline(s, round_roofline());

  KernelCost hit = table.cost(g, g.op(relu));
  CHECK(hit.duration_ns == 4321);
  CHECK(hit.sm_fraction == roofline.sm_fraction(g, g.op(relu)));
  KernelCost miss = table.cost(g, g.op(gelu));
  CHECK(miss.duration_ns == roofline.cost(g, g.op(gelu)).duration_ns);
  CHECK(miss.duration_ns == 16'777 + 1000);  // 8 MiB / 5e11 B/s = 16.777 µs, + 1 µs fixed
  CHECK(table.hits() == 1);
  CHECK(table.misses() == 1);

  TableCoverage cov = table.coverage(g);
  CHECK(cov.ops == 2);  // the view launches no kernel
  CHECK(cov.hits == 1);
  REQUIRE(cov.missing.size() == 1);
  CHECK(cov.missing[0] == op_signature(g, g.op(gelu)));
  (void)view;
}

TEST_CASE("make_cost_model builds the spec's kernel model with its parameters") {
  GpuSpec s = round_spec();
  auto plain = make_cost_model(s);
  auto* roofline = dynamic_cast<RooflineCostModel*>(plain.get());
  REQUIRE(roofline != nullptr);
  CHECK(roofline->options() == round_roofline());
  s.kernel_times["Relu in=f32[1] out=f32[1] attrs="] = 10;
  s.kernel_model = "table";
  auto measured = make_cost_model(s);
  CHECK(dynamic_cast<TableCostModel*>(measured.get()) != nullptr);
}

TEST_CASE("the table reports how much of a graph it has measured") {
  Graph g;
  TensorId x = add_tensor(g, "x", DType::F32, {1 << 20});
  OpId relu = add_op(g, OpKind::Relu, {x}, {x}, 1e6, 4 << 20, 4 << 20);
  add_op(g, OpKind::Gelu, {x}, {x}, 1e7, 4 << 20, 4 << 20);
  add_op(g, OpKind::Gelu, {x}, {x}, 1e7, 4 << 20, 4 << 20);  // the same signature: one unmeasured signature
  GpuSpec s = round_spec();
  s.kernel_times[op_signature(g, g.op(relu))] = 10;
  const nlohmann::json r = TableCostModel(s).report(g);
  CHECK(r["ops"] == 3);
  CHECK(r["measured_ops"] == 1);
  CHECK(r["unmeasured_signatures"] == 1);
  CHECK(RooflineCostModel(s).report(g).empty());  // the roofline has nothing to add
}

TEST_CASE("an op measured at another batch takes that time scaled by the batch, the roofline takes class scales") {
  auto build = [](int64_t n) {
    Graph g;
    g.batch = n;
    const TensorId x = testing::add_tensor(g, "x", DType::F32, {n, 1000});
    const TensorId y = testing::add_tensor(g, "y", DType::F32, {n, 1000});
    testing::add_op(g, OpKind::Relu, {x}, {y}, 0, static_cast<uint64_t>(n) * 4000, static_cast<uint64_t>(n) * 4000);
    return g;
  };
  GpuSpec s = testing::round_spec();  // round_roofline(): kernel_fixed_ns = 1000
  const Graph g32 = build(32), g64 = build(64), g8 = build(8);
  const std::string key = "Relu in=f32[B,1000] out=f32[B,1000] attrs=";
  s.kernel_times[op_signature(g32, g32.op(0))] = 9000;
  s.kernel_times_by_batch[key] = {{32, 9000}};
  TableCostModel t(s, round_roofline());
  CHECK(t.cost(g32, g32.op(0)).duration_ns == 9000);           // exact
  CHECK(t.cost(g64, g64.op(0)).duration_ns == 1000 + 8000 * 2);  // fixed + (9000 - fixed) * 64 / 32
  CHECK(t.cost(g8, g8.op(0)).duration_ns == 1000 + 2000);
  CHECK(t.coverage(g64).scaled == 1);
  CHECK(t.coverage(g64).hits == 0);
  s.kernel_times_by_batch[key].push_back({64, 15000});  // the nearest measured batch serves
  TableCostModel t2(s, round_roofline());
  CHECK(t2.cost(g64, g64.op(0)).duration_ns == 15000);

  GpuSpec r = testing::round_spec();
  const TimeNs plain = RooflineCostModel(r, round_roofline()).cost(g32, g32.op(0)).duration_ns;
  r.op_class_scale[OpKind::Relu] = 2.5;
  CHECK(RooflineCostModel(r, round_roofline()).cost(g32, g32.op(0)).duration_ns == std::llround(plain * 2.5));
}
