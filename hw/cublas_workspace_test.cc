#include "hw/cublas_workspace.h"

#include <catch2/catch.hpp>

#include "hw/testing/fixtures.h"

using namespace dlsim;

namespace {

constexpr uint64_t kCublasMiB = uint64_t{1} << 20;

// The sizes PyTorch 2.11 takes on an H200 (configs/hw/h200-datasheet.yaml): 32 MiB per cuBLAS handle and stream,
// 1 MiB per cuBLASLt workspace.
GpuSpec hopper_spec() {
  GpuSpec s = testing::round_spec();
  s.cublas_workspace_bytes = 32 * kCublasMiB;
  s.cublaslt_workspace_bytes = 1 * kCublasMiB;
  return s;
}

// A layer y = x W, its two gradients, and an SGD step; `matmul` false makes the product an elementwise op (a graph
// without cuBLAS), `backward` false leaves the backward and the step out.
Graph layer_graph(bool matmul, bool backward) {
  Graph g;
  const TensorId x = testing::add_tensor(g, "x", DType::F32, {8, 16});
  const TensorId w = testing::add_tensor(g, "w", DType::F32, {16, 16});
  const TensorId y = testing::add_tensor(g, "y", DType::F32, {8, 16});
  g.tensor(w).persistent = true;
  g.tensor(w).kind = TensorKind::Weight;
  testing::add_op(g, matmul ? OpKind::Linear : OpKind::Mul, {x, w}, {y}, 1, 1, 1, "fwd");
  if (!backward) return g;
  const TensorId gy = testing::add_tensor(g, "gy", DType::F32, {8, 16});
  const TensorId gx = testing::add_tensor(g, "gx", DType::F32, {8, 16});
  const TensorId gw = testing::add_tensor(g, "gw", DType::F32, {16, 16});
  g.op(testing::add_op(g, matmul ? OpKind::LinearBwdData : OpKind::MulBwd, {gy, w}, {gx}, 1, 1, 1, "bwd_data")).phase =
      Phase::Backward;
  g.op(testing::add_op(g, matmul ? OpKind::LinearBwdWeight : OpKind::MulBwd, {gy, x}, {gw}, 1, 1, 1, "bwd_w")).phase =
      Phase::Backward;
  g.op(testing::add_op(g, OpKind::SgdMomentumUpdate, {gw, w}, {w}, 1, 1, 1, "step")).phase = Phase::Optimizer;
  return g;
}

}  // namespace

TEST_CASE("cuBLAS workspaces: one cuBLAS and one cuBLASLt workspace per host thread that runs a matrix product") {
  Graph g = layer_graph(true, true);
  const size_t before = g.tensors().size();
  const CublasWorkspaces w = add_cublas_workspaces(g, hopper_spec());
  // The forward's product on Python's thread, the backward's on autograd's: the H200 snapshots' two 32 MiB and two
  // 1 MiB blocks.
  CHECK(w.threads == 2);
  CHECK(w.tensors == 4);
  CHECK(w.bytes == 66 * kCublasMiB);
  REQUIRE(g.tensors().size() == before + 4);
  const char* names[] = {"cublas workspace (python thread)", "cublaslt workspace (python thread)",
                         "cublas workspace (autograd thread)", "cublaslt workspace (autograd thread)"};
  const uint64_t sizes[] = {32 * kCublasMiB, kCublasMiB, 32 * kCublasMiB, kCublasMiB};
  for (size_t i = 0; i < 4; ++i) {
    const Tensor& t = g.tensors()[before + i];
    CAPTURE(i);
    CHECK(t.name == names[i]);
    CHECK(t.bytes == sizes[i]);
    CHECK(t.kind == TensorKind::Workspace);
    CHECK(t.persistent);  // never freed: PyTorch's handle pool keeps it to the end of the process
    CHECK_FALSE(t.learnable);
  }
  // No op reads them: they change no kernel's signature or time.
  for (const Op& op : g.ops()) CHECK(op.inputs.size() == 2);
}

TEST_CASE("cuBLAS workspaces: none without a matrix product, one thread's for a forward only") {
  Graph conv_like = layer_graph(false, true);
  CHECK(add_cublas_workspaces(conv_like, hopper_spec()).tensors == 0);

  Graph forward_only = layer_graph(true, false);
  const CublasWorkspaces w = add_cublas_workspaces(forward_only, hopper_spec());
  CHECK(w.threads == 1);
  CHECK(w.bytes == 33 * kCublasMiB);
}

TEST_CASE("cuBLAS workspaces: a hardware file that sizes none adds none, and a cuBLASLt size of 0 adds only cuBLAS's") {
  Graph g = layer_graph(true, true);
  CHECK(add_cublas_workspaces(g, testing::round_spec()).tensors == 0);  // the keys absent: 0 bytes
  GpuSpec unified = hopper_spec();
  unified.cublaslt_workspace_bytes = 0;  // as TORCH_CUBLASLT_UNIFIED_WORKSPACE=1: cuBLASLt shares cuBLAS's
  const CublasWorkspaces w = add_cublas_workspaces(g, unified);
  CHECK(w.tensors == 2);
  CHECK(w.bytes == 64 * kCublasMiB);
}
