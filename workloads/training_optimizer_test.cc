// The optimizer step and the loss's backward as PyTorch 2.x runs them on a GPU (training_optimizer.cc,
// training_backward.cc): the foreach Adam's temporary, the SGD step without one, cross entropy's middle gradient.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "workloads/training.h"
#include "workloads/zoo.h"

using namespace dlsim;

namespace {

Graph optimizer_test_graph(Optimizer opt, Kernels k, Precision p = Precision::FP32) {
  ModelOptions o;
  o.batch = 2;
  o.training.optimizer = opt;
  o.training.kernels = k;
  o.training.precision = p;
  return build_training_graph("cifar-resnet20", o);
}

std::vector<OpId> issue_order(const Graph& g) {
  std::vector<OpId> order(g.ops().size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<OpId>(i);
  return order;
}

}  // namespace

TEST_CASE("eager Adam and AdamW: the foreach step's sqrt temporary, one per dtype group, beside every gradient") {
  for (Optimizer opt : {Optimizer::Adam, Optimizer::AdamW})
    for (Precision p : {Precision::FP32, Precision::BF16}) {
      INFO(to_string(opt) << " " << to_string(p));
      const Graph g = optimizer_test_graph(opt, Kernels::Eager, p);
      const std::vector<Lifetime> life = tensor_lifetimes(g, issue_order(g));
      std::set<TensorId> temporaries;
      uint64_t updated_bytes = 0;
      int first_update = -1;
      std::vector<TensorId> grads;
      for (const Op& op : g.ops()) {
        if (op.kind != OpKind::AdamUpdate) continue;
        if (first_update < 0) first_update = op.id;
        REQUIRE(op.workspace != kNoTensor);
        temporaries.insert(op.workspace);
        updated_bytes += g.tensor(op.inputs[0]).bytes;
        grads.push_back(op.inputs[1]);
        CHECK(g.tensor(op.inputs[1]).kind == TensorKind::Gradient);
      }
      // One group (every parameter has the model's dtype): one temporary of all the parameters' size, in their
      // dtype, that no op reads or writes as a tensor (a scratch, allocated around each update).
      REQUIRE(temporaries.size() == 1);
      const Tensor& tmp = g.tensor(*temporaries.begin());
      CHECK(tmp.kind == TensorKind::Workspace);
      CHECK_FALSE(tmp.persistent);
      CHECK(tmp.dtype == (p == Precision::BF16 ? DType::BF16 : DType::F32));
      CHECK(tmp.bytes == updated_bytes);
      for (const Op& op : g.ops()) {
        CHECK(std::count(op.inputs.begin(), op.inputs.end(), tmp.id) == 0);
        CHECK(std::count(op.outputs.begin(), op.outputs.end(), tmp.id) == 0);
      }
      // At the group's first update every gradient is alive: made in backward, freed after its own update.
      REQUIRE(first_update >= 0);
      for (TensorId gr : grads) {
        CHECK(life[static_cast<size_t>(gr)].first < first_update);
        CHECK(life[static_cast<size_t>(gr)].last >= first_update);
      }
    }
}

TEST_CASE("the foreach temporaries follow the parameters' dtype groups, as _group_tensors_by_device_and_dtype") {
  // A bf16 model with one fp32 parameter (as a norm kept in fp32 would be): two groups, two temporaries.
  ModelOptions o;
  o.batch = 2;
  o.training.optimizer = Optimizer::AdamW;
  o.training.precision = Precision::BF16;
  Graph f = build_forward_graph("cifar-resnet20", o);
  TensorId fp32_param = kNoTensor;
  for (const Tensor& t : f.tensors())
    if (t.learnable && t.shape.size() == 1) fp32_param = t.id;  // the fc bias
  REQUIRE(fp32_param != kNoTensor);
  f.tensor(fp32_param).dtype = DType::F32;
  f.tensor(fp32_param).bytes *= 2;
  const Graph g = make_training_graph(f, o.training);
  std::map<TensorId, uint64_t> bytes_of;
  for (const Op& op : g.ops()) {
    if (op.kind != OpKind::AdamUpdate) continue;
    const Tensor& w = g.tensor(op.inputs[0]);
    CHECK(g.tensor(op.workspace).dtype == w.dtype);
    bytes_of[op.workspace] += w.bytes;
  }
  REQUIRE(bytes_of.size() == 2);
  for (const auto& [tmp, bytes] : bytes_of) CHECK(g.tensor(tmp).bytes == bytes);
}

TEST_CASE("SGD with momentum and the fused (multi-tensor) steps allocate nothing") {
  // _multi_tensor_sgd without weight decay, nesterov or maximize updates the buffers and parameters in place;
  // apex's FusedAdam and torch's fused=True keep no denominator.
  for (const auto& [opt, k] : std::vector<std::pair<Optimizer, Kernels>>{{Optimizer::SgdMomentum, Kernels::Eager},
                                                                           {Optimizer::SgdMomentum, Kernels::Fused},
                                                                           {Optimizer::Adam, Kernels::Fused},
                                                                           {Optimizer::AdamW, Kernels::Fused}}) {
    const Graph g = optimizer_test_graph(opt, k);
    int steps = 0;
    for (const Op& op : g.ops()) {
      if (op.phase != Phase::Optimizer) continue;
      ++steps;
      CHECK(op.workspace == kNoTensor);
    }
    CHECK(steps > 0);
  }
}

TEST_CASE("cross entropy's backward holds nll_loss_backward's gradient of the log-probabilities") {
  for (Precision p : {Precision::FP32, Precision::MixedBF16}) {
    const Graph g = optimizer_test_graph(Optimizer::SgdMomentum, Kernels::Eager, p);
    int found = 0;
    for (const Op& op : g.ops()) {
      if (op.kind != OpKind::CrossEntropyLossBwd) continue;
      ++found;
      const Tensor& logp = g.tensor(g.op(op.forward_op).outputs[1]);
      REQUIRE(op.workspace != kNoTensor);
      const Tensor& w = g.tensor(op.workspace);
      CHECK(w.kind == TensorKind::Workspace);
      CHECK(w.dtype == logp.dtype);
      CHECK(w.shape == logp.shape);
      CHECK(w.bytes == logp.bytes);
      CHECK(std::count(op.inputs.begin(), op.inputs.end(), logp.id) == 1);  // the log-probabilities, read beside it
    }
    CHECK(found == 1);
  }
}

// What each update moves: the foreach step's passes (training_optimizer.cc, from torch/optim/adam.py's
// _multi_tensor_adam): AdamW's decay mul_ (reads and writes the parameter), lerp_ (reads exp_avg and the gradient,
// writes exp_avg), mul_ (exp_avg_sq), addcmul_ (exp_avg_sq and the gradient; writes exp_avg_sq), sqrt (exp_avg_sq;
// writes the temporary), div_ and add_ (the temporary), addcdiv_ (parameter, exp_avg, temporary; writes the
// parameter): 12 reads and 8 writes of the parameter's size, 11 and 7 for Adam; a fused update reads parameter,
// gradient and both moments and writes the three it updates.
TEST_CASE("eager Adam and AdamW move the foreach passes' bytes, a fused update one pass's") {
  for (Optimizer opt : {Optimizer::Adam, Optimizer::AdamW})
    for (Precision p : {Precision::FP32, Precision::BF16}) {
      INFO(to_string(opt) << " " << to_string(p));
      const bool adamw = opt == Optimizer::AdamW;
      const Graph g = optimizer_test_graph(opt, Kernels::Eager, p);
      int updates = 0;
      for (const Op& op : g.ops()) {
        if (op.kind != OpKind::AdamUpdate) continue;
        ++updates;
        const uint64_t b = g.tensor(op.inputs[0]).bytes;
        CHECK(op.bytes_read == (adamw ? 12u : 11u) * b);
        CHECK(op.bytes_written == (adamw ? 8u : 7u) * b);
      }
      CHECK(updates > 0);
      const Graph f = optimizer_test_graph(opt, Kernels::Fused, p);
      uint64_t params = 0;
      for (const Op& op : f.ops())
        if (op.kind == OpKind::AdamUpdate)
          for (size_t i = 0; i < op.inputs.size(); i += 4) params += f.tensor(op.inputs[i]).bytes;
      for (const Op& op : f.ops()) {
        if (op.kind != OpKind::AdamUpdate) continue;
        CHECK(op.bytes_read == 4 * params);
        CHECK(op.bytes_written == 3 * params);
      }
    }
}
