#include "hw/table_cost_model.h"

#include <catch2/catch.hpp>

#include "hw/hardware.h"
#include "hw/op_signature.h"
#include "hw/test_fixtures.h"

using namespace dlsim;
using namespace dlsim::hw_test;

TEST_CASE("measured ops take their table time, others fall back to the roofline") {
  Graph g;
  TensorId x = add_tensor(g, "x", DType::F32, {1 << 20});
  TensorId y = add_tensor(g, "y", DType::F32, {1 << 20});
  OpId relu = add_op(g, OpKind::Relu, {x}, {y}, 1e6, 4 << 20, 4 << 20);
  OpId gelu = add_op(g, OpKind::Gelu, {x}, {y}, 1e7, 4 << 20, 4 << 20);
  OpId view = add_op(g, OpKind::Flatten, {x}, {y}, 0, 0, 0);

  GpuSpec s = round_spec();
  s.kernel_times[op_signature(g, g.op(relu))] = 4321;
  TableCostModel table(s);
  RooflineCostModel roofline(s);

  KernelCost hit = table.cost(g, g.op(relu));
  CHECK(hit.duration_ns == 4321);
  CHECK(hit.sm_fraction == sm_fraction(s, g, g.op(relu)));
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

TEST_CASE("make_cost_model picks the table only when the spec has measurements") {
  GpuSpec s = round_spec();
  auto plain = make_cost_model(s);
  CHECK(dynamic_cast<RooflineCostModel*>(plain.get()) != nullptr);
  s.kernel_times["Relu in=f32[1] out=f32[1] attrs="] = 10;
  auto measured = make_cost_model(s);
  CHECK(dynamic_cast<TableCostModel*>(measured.get()) != nullptr);
}

TEST_CASE("an op measured at another batch takes that time scaled by the batch, the roofline takes class scales") {
  auto build = [](int64_t n) {
    Graph g;
    g.batch = n;
    const TensorId x = hw_test::add_tensor(g, "x", DType::F32, {n, 1000});
    const TensorId y = hw_test::add_tensor(g, "y", DType::F32, {n, 1000});
    hw_test::add_op(g, OpKind::Relu, {x}, {y}, 0, static_cast<uint64_t>(n) * 4000, static_cast<uint64_t>(n) * 4000);
    return g;
  };
  GpuSpec s = hw_test::round_spec();  // kernel_fixed_ns = 1000
  const Graph g32 = build(32), g64 = build(64), g8 = build(8);
  const std::string key = "Relu in=f32[B,1000] out=f32[B,1000] attrs=";
  s.kernel_times[op_signature(g32, g32.op(0))] = 9000;
  s.kernel_times_by_batch[key] = {{32, 9000}};
  TableCostModel t(s);
  CHECK(t.cost(g32, g32.op(0)).duration_ns == 9000);           // exact
  CHECK(t.cost(g64, g64.op(0)).duration_ns == 1000 + 8000 * 2);  // fixed + (9000 - fixed) * 64 / 32
  CHECK(t.cost(g8, g8.op(0)).duration_ns == 1000 + 2000);
  CHECK(t.coverage(g64).scaled == 1);
  CHECK(t.coverage(g64).hits == 0);
  s.kernel_times_by_batch[key].push_back({64, 15000});  // the nearest measured batch serves
  TableCostModel t2(s);
  CHECK(t2.cost(g64, g64.op(0)).duration_ns == 15000);

  GpuSpec r = hw_test::round_spec();
  const TimeNs plain = RooflineCostModel(r).cost(g32, g32.op(0)).duration_ns;
  r.op_class_scale[OpKind::Relu] = 2.5;
  CHECK(RooflineCostModel(r).cost(g32, g32.op(0)).duration_ns == std::llround(plain * 2.5));
}
