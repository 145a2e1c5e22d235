// The optimizer step and the loss's backward as PyTorch 2.x runs them on a GPU (training_optimizer.cc,
// training_backward.cc): the foreach Adam's temporaries, the SGD step without one, cross entropy's middle gradient.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "workloads/training.h"
#include "workloads/zoo.h"

using namespace dlsim;

namespace {

Graph optimizer_test_graph(Optimizer opt, Kernels k, Precision p = Precision::FP32,
                           EagerAdam form = EagerAdam::Foreach) {
  ModelOptions o;
  o.batch = 2;
  o.training.optimizer = opt;
  o.training.kernels = k;
  o.training.precision = p;
  o.training.eager_adam = form;
  return build_training_graph("cifar-resnet20", o);
}

std::vector<OpId> issue_order(const Graph& g) {
  std::vector<OpId> order(g.ops().size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<OpId>(i);
  return order;
}

}  // namespace

// The temporary of each parameter: named after it, in its update's inputs.
TensorId sqrt_of(const Graph& g, const Op& update) {
  const std::string name = g.tensor(update.inputs[0]).name + ".foreach_sqrt";
  for (const auto* ts : {&update.inputs, &update.outputs})
    for (TensorId t : *ts)
      if (g.tensor(t).name == name) return t;
  return kNoTensor;
}

TEST_CASE("eager Adam and AdamW: _foreach_sqrt's temporaries, one per parameter, all beside every gradient") {
  for (Optimizer opt : {Optimizer::Adam, Optimizer::AdamW})
    for (Precision p : {Precision::FP32, Precision::BF16}) {
      INFO(to_string(opt) << " " << to_string(p));
      const Graph g = optimizer_test_graph(opt, Kernels::Eager, p);
      const std::vector<Lifetime> life = tensor_lifetimes(g, issue_order(g));
      std::vector<OpId> updates;
      for (const Op& op : g.ops())
        if (op.kind == OpKind::AdamUpdate) updates.push_back(op.id);
      REQUIRE(updates.size() > 2);
      const Op& first = g.op(updates.front());
      std::vector<TensorId> written;  // what the first update writes beside the parameter and its moments
      for (TensorId t : first.outputs)
        if (g.tensor(t).kind == TensorKind::Workspace) written.push_back(t);
      REQUIRE(written.size() == updates.size());
      for (size_t k = 0; k < updates.size(); ++k) {
        const Op& op = g.op(updates[k]);
        INFO(op.name);
        CHECK(op.workspace == kNoTensor);
        const Tensor& w = g.tensor(op.inputs[0]);
        const TensorId gr = op.inputs[1];
        CHECK(g.tensor(gr).kind == TensorKind::Gradient);
        // Its parameter's size and dtype, made (in the parameters' order) by the group's first update, as
        // _foreach_sqrt makes the whole list before any addcdiv_.
        const TensorId sq = sqrt_of(g, op);
        REQUIRE(sq != kNoTensor);
        CHECK(written[k] == sq);
        const Tensor& t = g.tensor(sq);
        CHECK(t.kind == TensorKind::Workspace);
        CHECK_FALSE(t.persistent);
        CHECK(t.dtype == (p == Precision::BF16 ? DType::BF16 : DType::F32));
        CHECK(t.shape == w.shape);
        CHECK(t.bytes == w.bytes);
        CHECK(std::count(op.inputs.begin(), op.inputs.end(), sq) == 1);
        // At the first update every temporary and every gradient are alive; each is freed after its own update.
        const Lifetime& ls = life[static_cast<size_t>(sq)];
        CHECK(ls.first == static_cast<int>(updates.front()));
        CHECK(ls.last == static_cast<int>(updates[k]));
        CHECK(life[static_cast<size_t>(gr)].first < static_cast<int>(updates.front()));
        CHECK(life[static_cast<size_t>(gr)].last == static_cast<int>(updates[k]));
        // The update's traffic is the foreach passes' over its parameter (training_optimizer.cc): Adam reads 11 and
        // writes 7 tensors of the parameter's size, AdamW 12 and 8; the temporary appended after emit adds none.
        const bool decoupled = op.has_attr(Attr::adamw);
        CHECK(op.bytes_read == (decoupled ? 12 : 11) * w.bytes);
        CHECK(op.bytes_written == (decoupled ? 8 : 7) * w.bytes);
      }
    }
}

TEST_CASE("the foreach temporaries follow the parameters' dtype groups, as _group_tensors_by_device_and_dtype") {
  // A bf16 model with one fp32 parameter (as a norm kept in fp32 would be): two groups, each made by its first
  // update.
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
  std::map<DType, uint64_t> param_bytes, written_bytes;
  std::map<DType, int> writers;
  for (const Op& op : g.ops()) {
    if (op.kind != OpKind::AdamUpdate) continue;
    const Tensor& w = g.tensor(op.inputs[0]);
    param_bytes[w.dtype] += w.bytes;
    CHECK(g.tensor(sqrt_of(g, op)).dtype == w.dtype);
    bool writes = false;
    for (TensorId t : op.outputs)
      if (g.tensor(t).kind == TensorKind::Workspace) {
        CHECK(g.tensor(t).dtype == w.dtype);
        written_bytes[w.dtype] += g.tensor(t).bytes;
        writes = true;
      }
    writers[w.dtype] += writes;
  }
  REQUIRE(param_bytes.size() == 2);
  for (const auto& [dtype, bytes] : param_bytes) {
    INFO(to_string(dtype));
    CHECK(writers[dtype] == 1);
    CHECK(written_bytes[dtype] == bytes);
  }
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

// The harness's form (dlsim validate's plans): one fused kernel, no middle tensor; the op reads and writes the same.
TEST_CASE("without nll_grad_workspace, cross entropy's backward holds no workspace and moves the same bytes") {
  ModelOptions o;
  o.batch = 2;
  const Graph with = build_training_graph("cifar-resnet20", o);
  o.training.nll_grad_workspace = false;
  const Graph without = build_training_graph("cifar-resnet20", o);
  REQUIRE(with.ops().size() == without.ops().size());
  REQUIRE(with.tensors().size() == without.tensors().size() + 1);  // the middle gradient, and nothing else
  int found = 0;
  for (size_t i = 0; i < with.ops().size(); ++i) {
    const Op& a = with.ops()[i];
    const Op& b = without.ops()[i];
    if (a.kind != OpKind::CrossEntropyLossBwd) continue;
    ++found;
    CHECK(a.workspace != kNoTensor);
    CHECK(b.workspace == kNoTensor);
    CHECK(a.bytes_read == b.bytes_read);
    CHECK(a.bytes_written == b.bytes_written);
  }
  CHECK(found == 1);
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
        CHECK(op.attr(Attr::foreach) == 1);
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

// What the GPU harness runs for each update op (dlsim-cuda's Adam kernel), so what dlsim validate's plans are: one
// pass over parameter, gradient and both moments, no foreach temporary, no foreach attr, so that the kernel table
// and the op_class_scale measured on those kernels (configs/hw/h100-sxm-harness.yaml) serve these ops and no other.
TEST_CASE("eager Adam and AdamW per parameter: one fused kernel's bytes, no temporary, not foreach") {
  for (Optimizer opt : {Optimizer::Adam, Optimizer::AdamW}) {
    INFO(to_string(opt));
    const Graph g = optimizer_test_graph(opt, Kernels::Eager, Precision::FP32, EagerAdam::PerParameter);
    int updates = 0;
    for (const Op& op : g.ops()) {
      if (op.phase != Phase::Optimizer) continue;
      REQUIRE(op.kind == OpKind::AdamUpdate);
      ++updates;
      const uint64_t b = g.tensor(op.inputs[0]).bytes;
      CHECK(op.inputs.size() == 4);
      CHECK(op.outputs.size() == 3);
      CHECK(op.bytes_read == 4 * b);
      CHECK(op.bytes_written == 3 * b);
      CHECK(op.attr(Attr::foreach) == 0);
      CHECK(op.attr(Attr::adamw) == (opt == Optimizer::AdamW ? 1 : 0));
      for (TensorId t : op.outputs) CHECK(g.tensor(t).kind != TensorKind::Workspace);
    }
    CHECK(updates > 2);
  }
}

// torch.optim's foreach SGD with weight decay (the H200's measured steps: 1e-4): _foreach_add(grads, params) makes a
// decayed gradient per parameter before the momentum, alive to the end of the step, and is a fourth pass: ResNet-50's
// 13 launches of results/fidelity/membound-kernels.md (4 for the three-list decay, 3 each for the others).
TEST_CASE("eager SGD with weight decay: a decayed gradient per parameter, all alive at the first update, one more pass") {
  ModelOptions o;
  o.batch = 2;
  o.training.weight_decay = 1e-4;
  const Graph g = build_training_graph("resnet50", o);
  o.training.weight_decay = 0;
  const Graph plain = build_training_graph("resnet50", o);
  const std::vector<Lifetime> life = tensor_lifetimes(g, issue_order(g));
  std::vector<OpId> updates, plain_updates;
  for (const Op& op : g.ops())
    if (op.kind == OpKind::SgdMomentumUpdate) updates.push_back(op.id);
  for (const Op& op : plain.ops())
    if (op.kind == OpKind::SgdMomentumUpdate) plain_updates.push_back(op.id);
  REQUIRE(updates.size() == 161);
  REQUIRE(plain_updates.size() == updates.size());
  std::vector<TensorId> written;
  for (TensorId t : g.op(updates.front()).outputs)
    if (g.tensor(t).kind == TensorKind::Workspace) written.push_back(t);
  REQUIRE(written.size() == updates.size());
  int64_t launches = 0, plain_launches = 0;
  for (size_t k = 0; k < updates.size(); ++k) {
    const Op& op = g.op(updates[k]);
    const Op& before = plain.op(plain_updates[k]);
    INFO(op.name);
    const Tensor& w = g.tensor(op.inputs[0]);
    const TensorId d = op.inputs.back();
    CHECK(written[k] == d);
    CHECK(g.tensor(d).name == w.name + ".foreach_decay");
    CHECK(g.tensor(d).bytes == w.bytes);
    CHECK(life[static_cast<size_t>(d)].first == static_cast<int>(updates.front()));
    CHECK(life[static_cast<size_t>(d)].last == static_cast<int>(updates[k]));
    // the update's own bytes stay the fused kernel's (what the roofline prices); the passes' are its charge
    CHECK(op.bytes_read == before.bytes_read);
    CHECK(op.bytes_written == before.bytes_written);
    CHECK(op.attr(Attr::foreach_bytes) == 11 * static_cast<int64_t>(w.bytes));
    CHECK(before.attr(Attr::foreach_bytes) == 8 * static_cast<int64_t>(w.bytes));
    launches += op.attr(Attr::launches);
    plain_launches += before.attr(Attr::launches);
  }
  CHECK(launches == 13);
  CHECK(plain_launches == 9);
  for (const Op& op : plain.ops())  // without decay the step allocates nothing
    if (op.phase == Phase::Optimizer)
      for (TensorId t : op.outputs) CHECK(plain.tensor(t).kind != TensorKind::Workspace);
}

// results/fidelity/membound-kernels.md's table, for the twelve CNNs the zoo builds: the parameters with a gradient
// (tensors, elements) and the launches per step by multi_tensor_apply's rule over torch.optim's foreach SGD with
// weight decay, which the H200's profiled steps ran, grid for grid. The zoo lists its parameters as torchvision's
// parameters() does (Inception-v3 without the auxiliary classifier, which the loss does not read); the elements are
// membound_kernels.py's parameter_numels (torchvision 0.14) summed.
TEST_CASE("eager SGD's launches per step are the measured steps' for the zoo's twelve CNNs") {
  struct Row {
    const char* model;
    size_t tensors;
    int64_t elements;
    int64_t launches;
  };
  const Row rows[] = {{"alexnet", 16, 61100840, 12},       {"densenet121", 364, 7978856, 24},
                      {"googlenet", 173, 6624904, 12},     {"inception_v3", 284, 23834568, 19},
                      {"mobilenet_v2", 158, 3504872, 12},  {"resnet101", 314, 44549160, 23},
                      {"resnet152", 467, 60192808, 31},    {"resnet18", 62, 11689512, 5},
                      {"resnet50", 161, 25557032, 13},     {"squeezenet1_1", 52, 1235496, 5},
                      {"vgg16", 32, 138357544, 28},        {"vgg19", 38, 143667240, 28}};
  for (const Row& r : rows) {
    INFO(r.model);
    ModelOptions o;
    o.batch = 1;
    o.training.weight_decay = 1e-4;
    const Graph g = build_training_graph(r.model, o);
    size_t tensors = 0;
    int64_t elements = 0, launches = 0;
    for (const Op& op : g.ops()) {
      if (op.kind != OpKind::SgdMomentumUpdate) continue;
      ++tensors;
      elements += numel(g.tensor(op.inputs[0]).shape);
      launches += op.attr(Attr::launches);
    }
    CHECK(tensors == r.tensors);
    CHECK(elements == r.elements);
    CHECK(launches == r.launches);
  }
}
