// How fast the simulator can ask for kernel costs: it does so once per op per simulated iteration (roofline),
// and the table model adds building the op's signature and a map lookup.
#include <benchmark/benchmark.h>

#include "hw/op_signature.h"
#include "hw/roofline.h"
#include "hw/table_cost_model.h"
#include "hw/testing/fixtures.h"

namespace {

using namespace dlsim;
using namespace dlsim::testing;

// A ResNet-like chain: conv, batch norm, relu, repeated, with distinct shapes per stage.
Graph chain(int blocks) {
  Graph g;
  TensorId x = add_tensor(g, "input", DType::F32, {32, 64, 56, 56});
  for (int i = 0; i < blocks; ++i) {
    int64_t c = 64 << (i % 4);
    int64_t hw = 56 >> (i % 4);
    TensorId w = add_tensor(g, "w", DType::F32, {c, c, 3, 3});
    TensorId y = add_tensor(g, "y", DType::F32, {32, c, hw, hw});
    Op conv;
    conv.kind = OpKind::Conv2d;
    conv.inputs = {x, w};
    conv.outputs = {y};
    conv.flops = 2.0 * 32 * c * hw * hw * c * 9;
    conv.bytes_read = 4 * 32 * c * hw * hw;
    conv.bytes_written = conv.bytes_read;
    conv.set_attr(Attr::kernel_h, 3);
    conv.set_attr(Attr::kernel_w, 3);
    conv.set_attr(Attr::pad_h, 1);
    conv.set_attr(Attr::stride_h, 1);
    g.add_op(conv);
    add_op(g, OpKind::BatchNorm, {y}, {y}, 8.0 * 32 * c * hw * hw, conv.bytes_read, conv.bytes_read);
    add_op(g, OpKind::Relu, {y}, {y}, 1.0 * 32 * c * hw * hw, conv.bytes_read, conv.bytes_read);
    x = y;
  }
  return g;
}

void BM_RooflineCost(benchmark::State& state) {
  Graph g = chain(static_cast<int>(state.range(0)));
  RooflineCostModel m(round_spec(), round_roofline());
  for (auto _ : state)
    for (const Op& op : g.ops()) benchmark::DoNotOptimize(m.cost(g, op));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(g.ops().size()));
}
BENCHMARK(BM_RooflineCost)->Arg(100)->Arg(1000);

void BM_OpSignature(benchmark::State& state) {
  Graph g = chain(static_cast<int>(state.range(0)));
  for (auto _ : state)
    for (const Op& op : g.ops()) benchmark::DoNotOptimize(op_signature(g, op));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(g.ops().size()));
}
BENCHMARK(BM_OpSignature)->Arg(1000);

// Every other op measured: half the lookups hit, half fall back to the roofline.
void BM_TableCost(benchmark::State& state) {
  Graph g = chain(static_cast<int>(state.range(0)));
  GpuSpec s = round_spec();
  for (size_t i = 0; i < g.ops().size(); i += 2) s.kernel_times[op_signature(g, g.ops()[i])] = 1000 + i;
  TableCostModel m(s, round_roofline());
  for (auto _ : state)
    for (const Op& op : g.ops()) benchmark::DoNotOptimize(m.cost(g, op));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(g.ops().size()));
}
BENCHMARK(BM_TableCost)->Arg(1000);

}  // namespace
