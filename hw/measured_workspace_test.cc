#include "hw/measured_workspace.h"

#include <catch2/catch.hpp>

#include "hw/batch_signature.h"
#include "hw/op_signature.h"
#include "hw/testing/fixtures.h"

using namespace dlsim;

namespace {
Graph conv_graph(int64_t n) {
  Graph g;
  g.batch = n;
  const TensorId x = testing::add_tensor(g, "x", DType::F32, {n, 16, 8, 8});
  const TensorId w = testing::add_tensor(g, "w", DType::F32, {16, 16, 3, 3});
  g.tensor(w).kind = TensorKind::Weight;
  g.tensor(w).persistent = true;
  const TensorId y = testing::add_tensor(g, "y", DType::F32, {n, 16, 8, 8});
  const TensorId ws = testing::add_tensor(g, "conv.workspace", DType::U8, {1000});
  g.tensor(ws).kind = TensorKind::Workspace;
  const OpId c = testing::add_op(g, OpKind::Conv2d, {x, w}, {y}, 1, 1, 1);
  g.op(c).workspace = ws;
  return g;
}
}  // namespace

TEST_CASE("measured workspaces replace the assumption: exact, then scaled by the batch, else unchanged") {
  Graph g32 = conv_graph(32), g48 = conv_graph(48), g64 = conv_graph(64);
  GpuSpec s = testing::round_spec();
  // Without calibrated entries nothing changes.
  CHECK(apply_measured_workspaces(g32, s).exact == 0);
  CHECK(g32.tensor(g32.op(0).workspace).bytes == 1000);
  s.conv_workspace[op_signature(g32, g32.op(0))] = 5000;
  s.conv_workspace_by_batch[batch_free_signature(g32, g32.op(0))->key] = {{32, 5000}};
  const WorkspaceCoverage c32 = apply_measured_workspaces(g32, s);
  CHECK(c32.exact == 1);
  CHECK(g32.tensor(g32.op(0).workspace).bytes == 5000);
  CHECK(apply_measured_workspaces(g48, s).scaled == 1);
  CHECK(g48.tensor(g48.op(0).workspace).bytes == 7680);  // 5000 * 48 / 32 = 7500, rounded up to 256 B
  s.conv_workspace.clear();
  s.conv_workspace_by_batch.clear();
  s.conv_workspace["something else"] = 1;
  CHECK(apply_measured_workspaces(g64, s).scaled == 0);
  CHECK(g64.tensor(g64.op(0).workspace).bytes == 1000);
}
