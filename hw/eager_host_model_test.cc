#include "hw/eager_host_model.h"

#include <catch2/catch.hpp>

#include "hw/testing/fixtures.h"
#include "workloads/torch_step_graph.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// Every cost a different power of two (ns), so that each charge below is a sum whose terms can be read off.
EagerHostSpec eager_host_powers_of_two() {
  EagerHostSpec s;
  for (size_t c = 0; c < kHostOpClasses; ++c) {
    s.forward_ns[c] = TimeNs{1} << c;         // conv 1, matmul 2, norm 4, elementwise 8, view 16
    s.backward_ns[c] = TimeNs{1} << (5 + c);  // conv 32, matmul 64, norm 128, elementwise 256, view 512
  }
  s.extra_kernel_ns = 1 << 10;
  s.grad_accumulate_ns = 1 << 11;
  s.param_grad_ns = 1 << 12;
  s.backward_start_ns = 1 << 13;
  s.optimizer_step_ns = 1 << 14;
  s.optimizer_tensor_ns = 1 << 15;
  return s;
}

OpId add_eager_phase_op(Graph& g, OpKind k, Phase p, std::vector<TensorId> in, std::vector<TensorId> out, OpId forward_op = -1) {
  const OpId id = add_op(g, k, std::move(in), std::move(out), 0, 0, 0);
  g.op(id).phase = p;
  g.op(id).forward_op = forward_op;
  return id;
}

}  // namespace

TEST_CASE("eager host charges: each op of a hand-made training step costs what the formula says") {
  Graph g;
  const TensorId x = add_tensor(g, "x", DType::F32, {2, 3, 4, 4});
  const TensorId w = add_tensor(g, "conv.w", DType::F32, {3, 3, 1, 1});
  const TensorId gamma = add_tensor(g, "bn.w", DType::F32, {3});
  g.tensor(w).learnable = g.tensor(gamma).learnable = true;
  const TensorId y = add_tensor(g, "y", DType::F32, {2, 3, 4, 4});
  const TensorId z = add_tensor(g, "z", DType::F32, {2, 3, 4, 4});
  const TensorId flat = add_tensor(g, "flat", DType::F32, {2, 48});
  const TensorId dz = add_tensor(g, "dz", DType::F32, {2, 3, 4, 4});
  const TensorId dy = add_tensor(g, "dy", DType::F32, {2, 3, 4, 4});
  const TensorId dx = add_tensor(g, "dx", DType::F32, {2, 3, 4, 4});
  auto grad_of = [&](const std::string& name, TensorId of) {
    const TensorId t = add_tensor(g, name, DType::F32, g.tensor(of).shape);
    g.tensor(t).kind = TensorKind::Gradient;
    g.tensor(t).grad_of = of;
    return t;
  };
  const TensorId dw = grad_of("conv.w.grad", w), dgamma = grad_of("bn.w.grad", gamma);
  const TensorId momentum = add_tensor(g, "conv.w.momentum", DType::F32, {3, 3, 1, 1});

  const OpId conv = add_eager_phase_op(g, OpKind::Conv2d, Phase::Forward, {x, w}, {y});
  const OpId bn = add_eager_phase_op(g, OpKind::BatchNorm, Phase::Forward, {y, gamma}, {z});
  const OpId view = add_eager_phase_op(g, OpKind::Flatten, Phase::Forward, {z}, {flat});
  const OpId relu = add_eager_phase_op(g, OpKind::Relu, Phase::Forward, {z}, {z});
  const OpId transpose = add_eager_phase_op(g, OpKind::Transpose, Phase::Forward, {z}, {z});
  g.op(transpose).set_attr(Attr::layout_transpose, 1);
  const OpId bn_bwd = add_eager_phase_op(g, OpKind::BatchNormBwd, Phase::Backward, {dz, y}, {dy, dgamma}, bn);
  const OpId dgrad = add_eager_phase_op(g, OpKind::Conv2dBwdData, Phase::Backward, {dy, w}, {dx}, conv);
  const OpId wgrad = add_eager_phase_op(g, OpKind::Conv2dBwdFilter, Phase::Backward, {dy, x}, {dw}, conv);
  const OpId acc = add_eager_phase_op(g, OpKind::GradAccumulate, Phase::Backward, {dw, dw}, {dw}, conv);
  const OpId step_w = add_eager_phase_op(g, OpKind::SgdMomentumUpdate, Phase::Optimizer, {w, dw, momentum}, {w, momentum});
  const OpId step_g = add_eager_phase_op(g, OpKind::SgdMomentumUpdate, Phase::Optimizer, {gamma, dgamma}, {gamma});
  const OpId fused = add_eager_phase_op(g, OpKind::SgdMomentumUpdate, Phase::Optimizer, {w, gamma}, {w, gamma});
  const OpId unscale = add_eager_phase_op(g, OpKind::Other, Phase::Optimizer, {dw}, {dw});

  const EagerHostCharges c = eager_host_charges(eager_host_powers_of_two(), g);
  REQUIRE(c.issue_ns.size() == g.ops().size());
  REQUIRE(c.once_ns.size() == g.ops().size());
  auto at = [](const std::vector<TimeNs>& v, OpId id) { return v[static_cast<size_t>(id)]; };
  CHECK(at(c.issue_ns, conv) == 1);                   // forward conv
  CHECK(at(c.issue_ns, bn) == 4 + 8);                 // forward norm + num_batches_tracked.add_ (elementwise)
  CHECK(at(c.issue_ns, view) == 16);                  // a view
  CHECK(at(c.issue_ns, relu) == 8);                   // elementwise
  CHECK(at(c.issue_ns, transpose) == 1024);           // cuDNN's layout transpose: a further kernel of the call
  CHECK(at(c.issue_ns, bn_bwd) == 128 + 4096);        // backward node (norm) + AccumulateGrad of bn.w
  CHECK(at(c.issue_ns, dgrad) == 32);                 // the convolution's node: its first kernel
  CHECK(at(c.issue_ns, wgrad) == 1024 + 4096);        // the node's second kernel + AccumulateGrad of conv.w
  CHECK(at(c.issue_ns, acc) == 2048);                 // the engine's sum; conv.w's .grad already counted
  CHECK(at(c.issue_ns, step_w) == 32768);             // one parameter
  CHECK(at(c.issue_ns, step_g) == 32768);
  CHECK(at(c.issue_ns, fused) == 2 * 32768);          // a fused step over two parameters
  CHECK(at(c.issue_ns, unscale) == 1024);             // updates no parameter: one foreach kernel
  // Once per step: the backward's start on the first backward op, the optimizer's on the first optimizer op.
  for (const Op& op : g.ops()) {
    const TimeNs expected = op.id == bn_bwd ? 8192 : op.id == step_w ? 16384 : 0;
    CHECK(at(c.once_ns, op.id) == expected);
  }
}

TEST_CASE("eager host charges: an empty spec costs nothing, an empty graph has no charges") {
  Graph g;
  const TensorId x = add_tensor(g, "x", DType::F32, {4});
  add_eager_phase_op(g, OpKind::Relu, Phase::Forward, {x}, {x});
  const EagerHostCharges zero = eager_host_charges(EagerHostSpec{}, g);
  CHECK(zero.issue_ns == std::vector<TimeNs>{0});
  CHECK(zero.once_ns == std::vector<TimeNs>{0});
  CHECK(eager_host_charges(eager_host_powers_of_two(), Graph{}).issue_ns.empty());
}

TEST_CASE("host op classes: backward kinds take their forward op's class") {
  CHECK(host_op_class(OpKind::Conv2dBwdFilter) == HostOpClass::Conv);
  CHECK(host_op_class(OpKind::LinearBwdWeight) == HostOpClass::Matmul);
  CHECK(host_op_class(OpKind::FlashAttentionBwd) == HostOpClass::Matmul);
  CHECK(host_op_class(OpKind::LayerNormBwd) == HostOpClass::Norm);
  CHECK(host_op_class(OpKind::Reshape) == HostOpClass::View);
  CHECK(host_op_class(OpKind::MaxPoolBwd) == HostOpClass::Elementwise);
  CHECK(std::string(to_string(HostOpClass::Elementwise)) == "elementwise");
}

TEST_CASE("eager host charges: a recorded step's gradient sums are the engine's, its backward ops backward's") {
  // tiny_mlp (x + relu(fc(x)) twice): autograd's engine sums x's two gradients once per block. It adds them from
  // C++ between nodes, as the zoo's GradAccumulate ops: grad_accumulate_us, not a backward node's first kernel.
  const Graph g =
      load_torch_step(std::string(DLSIM_SOURCE_DIR) + "/workloads/testdata/torch_steps/tiny_mlp.torchstep.json").graph;
  const EagerHostSpec s = eager_host_powers_of_two();
  const EagerHostCharges c = eager_host_charges(s, g);
  int sums = 0;
  for (const Op& op : g.ops()) {
    const TimeNs charge = c.issue_ns[static_cast<size_t>(op.id)];
    if (op.kind == OpKind::GradAccumulate) {
      CHECK(charge == s.grad_accumulate_ns);  // x's gradient is no parameter's: no AccumulateGrad on top
      ++sums;
    }
    if (op.phase != Phase::Backward) continue;
    // Every backward op pays backward's costs: a node of its class, a further kernel of a node, or the engine's
    // sum, each with any parameter gradients it stores; never a forward op's cost.
    const TimeNs own = charge % s.param_grad_ns;
    CHECK((own == s.backward_ns[static_cast<size_t>(host_op_class(op.kind))] || own == s.extra_kernel_ns ||
           own == s.grad_accumulate_ns));
  }
  CHECK(sums == 2);
}
