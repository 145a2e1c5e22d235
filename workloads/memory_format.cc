#include "workloads/memory_format.h"

#include <map>

namespace dlsim {
namespace {

bool is_convolution(OpKind k) {
  return k == OpKind::Conv2d || k == OpKind::Conv2dBwdData || k == OpKind::Conv2dBwdFilter;
}

bool is_16bit(DType t) { return t == DType::F16 || t == DType::BF16; }

// The activation operands of a convolution, by training_backward.cc's conventions: which inputs and outputs carry the
// batch (the others are filters, their gradients and the bias gradient).
struct ActivationOperands {
  std::vector<size_t> inputs;
  std::vector<size_t> outputs;
};

ActivationOperands activation_operands(const Op& op) {
  switch (op.kind) {
    case OpKind::Conv2d: return {{0}, {0}};           // [x, w, (b)] -> [y]
    case OpKind::Conv2dBwdData: return {{0}, {0}};    // [dy, w] -> [dx]
    case OpKind::Conv2dBwdFilter: return {{0, 1}, {}};  // [dy, x] -> [dw, (db)]
    default: return {};
  }
}

class Transposer {
 public:
  explicit Transposer(const Graph& g) : in_(g) {
    out_.name = g.name;
    out_.batch = g.batch;
    out_.blocks = g.blocks;
    for (const Tensor& t : g.tensors()) out_.add_tensor(t);
  }

  Graph run() {
    for (const Op& op : in_.ops()) {
      if (is_convolution(op.kind) && is_16bit(in_.tensor(op.inputs[0]).dtype)) {
        convolution(op);
      } else {
        copy(op);
      }
    }
    return std::move(out_);
  }

 private:
  const Graph& in_;
  Graph out_;
  std::map<OpId, OpId> new_id_;

  void copy(Op op) {
    const OpId old = op.id;
    if (op.forward_op >= 0) op.forward_op = new_id_.at(op.forward_op);
    new_id_[old] = out_.add_op(std::move(op));
  }

  TensorId nhwc_twin(TensorId t) {
    Tensor n = out_.tensor(t);
    n.name += ".nhwc";
    n.id = kNoTensor;
    n.persistent = false;
    n.kind = TensorKind::Activation;
    n.grad_of = kNoTensor;
    n.shape = {n.shape[0], n.shape[2], n.shape[3], n.shape[1]};
    return out_.add_tensor(std::move(n));
  }

  void transpose(const Op& conv, TensorId from, TensorId to, const std::vector<int64_t>& perm, const std::string& suffix) {
    Op t;
    t.name = conv.name + suffix;
    t.kind = OpKind::Transpose;
    t.phase = conv.phase;
    // A backward-phase transpose belongs to the convolution's forward op, as the convolution does.
    t.forward_op = conv.forward_op >= 0 ? new_id_.at(conv.forward_op) : -1;
    t.block = conv.block;  // a forward transpose belongs to the convolution's block
    t.inputs = {from};
    t.outputs = {to};
    t.bytes_read = out_.tensor(from).bytes;
    t.bytes_written = out_.tensor(to).bytes;
    t.set_attr_list(Attr::perm, perm);
    t.set_attr(Attr::layout_transpose, 1);
    out_.add_op(std::move(t));
  }

  void convolution(Op op) {
    const ActivationOperands a = activation_operands(op);
    for (size_t i : a.inputs) {
      const TensorId t = op.inputs.at(i);
      if (out_.tensor(t).shape.size() != 4) continue;
      const TensorId n = nhwc_twin(t);
      transpose(op, t, n, {0, 2, 3, 1}, ".to_nhwc" + std::to_string(i));
      op.inputs[i] = n;
    }
    std::vector<std::pair<TensorId, TensorId>> back;  // (NHWC result, the NCHW tensor it becomes)
    for (size_t i : a.outputs) {
      const TensorId t = op.outputs.at(i);
      if (out_.tensor(t).shape.size() != 4) continue;
      const TensorId n = nhwc_twin(t);
      op.outputs[i] = n;
      back.emplace_back(n, t);
    }
    const Op conv = op;  // for the names and phase of the transposes after it
    copy(std::move(op));
    for (const auto& [n, t] : back) transpose(conv, n, t, {0, 3, 1, 2}, ".to_nchw");
  }
};

}  // namespace

Graph apply_memory_format(const Graph& g, MemoryFormat format) {
  if (format == MemoryFormat::NHWC) {
    Graph out = g;
    for (const Op& op : g.ops())
      if (is_convolution(op.kind)) out.op(op.id).set_attr(Attr::channels_last, 1);
    return out;
  }
  bool any = false;
  for (const Op& op : g.ops()) any |= is_convolution(op.kind) && is_16bit(g.tensor(op.inputs[0]).dtype);
  return any ? Transposer(g).run() : g;
}

}  // namespace dlsim
