// The trace's records -> a training Graph (workloads/torch_step_graph.h says what becomes what). One pass over the
// storages makes the tensors (in storage order, so the same file always gives the same graph), one pass over the
// ops makes dlsim's ops in the recorded issue order, and one over the saved tensors ties each to its backward use.
#include "workloads/torch_step_graph.h"

#include <algorithm>

#include "common/config_error.h"
#include "workloads/internal/torch_step_kinds.h"

namespace dlsim {

namespace {

using workloads_internal::TorchStepPiece;

struct StepDType {
  DType dtype;
  uint32_t bytes;  // per element
  bool modelled;
};

StepDType step_dtype(const std::string& name) {
  if (name == "float32") return {DType::F32, 4, true};
  if (name == "bfloat16") return {DType::BF16, 2, true};
  if (name == "float16") return {DType::F16, 2, true};
  if (name == "int64") return {DType::I64, 8, true};
  if (name == "int32") return {DType::I32, 4, true};
  if (name == "uint8") return {DType::U8, 1, true};
  if (name == "bool") return {DType::Bool, 1, true};
  // Held as bytes: the tensor's size is its storage's; only the kernel model's choice of math path loses.
  if (name == "float64" || name == "complex64") return {DType::U8, 8, false};
  if (name == "complex128") return {DType::U8, 16, false};
  if (name == "int16" || name == "uint16") return {DType::U8, 2, false};
  if (name == "uint32") return {DType::U8, 4, false};
  return {DType::U8, 1, false};  // int8, float8 variants, anything newer
}

TensorKind step_tensor_kind(const std::string& kind) {
  if (kind == "parameter" || kind == "buffer" || kind == "constant") return TensorKind::Weight;
  if (kind == "gradient") return TensorKind::Gradient;
  if (kind == "optimizer_state") return TensorKind::OptimizerState;
  if (kind == "input") return TensorKind::Input;
  return TensorKind::Activation;
}

Phase step_phase(const TorchStepOp& op) {
  if (op.phase == "forward") return Phase::Forward;
  return op.phase == "backward" ? Phase::Backward : Phase::Optimizer;
}

uint64_t view_bytes(const TorchStepView& v) {
  uint64_t n = step_dtype(v.dtype).bytes;
  for (int64_t d : v.shape) n = std::min<uint64_t>(n * static_cast<uint64_t>(d), kMaxTensorBytes);
  return n;
}

class StepGraphBuilder {
 public:
  explicit StepGraphBuilder(const TorchStepFile& f) : f_(f) {}

  TorchStepLoad build() {
    out_.graph.name = f_.model;
    out_.graph.batch = f_.batch;
    out_.graph.blocks = f_.blocks;
    out_.recorded_ops = static_cast<int64_t>(f_.ops.size());
    make_tensors();
    pieces_of_.assign(f_.ops.size(), {});
    for (const TorchStepOp& op : f_.ops) make_ops(op);
    attach_saved();
    hold_to_recorded_frees();
    return std::move(out_);
  }

 private:
  // The first view of each storage (in op order) gives its tensor's dtype and shape.
  void make_tensors() {
    std::vector<const TorchStepView*> first(f_.storages.size(), nullptr);
    for (const TorchStepOp& op : f_.ops)
      for (const auto* views : {&op.inputs, &op.outputs})
        for (const TorchStepView& v : *views)
          if (first[static_cast<size_t>(v.storage)] == nullptr) first[static_cast<size_t>(v.storage)] = &v;
    tensor_of_.assign(f_.storages.size(), kNoTensor);
    for (const TorchStepStorage& s : f_.storages) {
      if (s.host || s.bytes == 0) continue;
      const TorchStepView* v = first[static_cast<size_t>(s.id)];
      Tensor t;
      t.name = s.name.empty() ? "storage" + std::to_string(s.id) : s.name;
      t.kind = step_tensor_kind(s.kind);
      t.bytes = s.bytes;
      t.persistent = !s.allocated_at && !s.freed_at;
      t.learnable = s.kind == "parameter";
      const StepDType dt = step_dtype(v != nullptr ? v->dtype : "uint8");
      t.dtype = dt.dtype;
      if (v != nullptr && !dt.modelled) ++out_.other_dtypes[v->dtype];
      t.shape = v != nullptr && dt.modelled && view_bytes(*v) <= s.bytes ? v->shape
                                                                         : std::vector<int64_t>{static_cast<int64_t>(s.bytes)};
      tensor_of_[static_cast<size_t>(s.id)] = out_.graph.add_tensor(std::move(t));
    }
    for (const TorchStepStorage& s : f_.storages) {
      const TensorId t = tensor_of_[static_cast<size_t>(s.id)];
      if (t != kNoTensor && s.grad_of) out_.graph.tensor(t).grad_of = tensor_of_[static_cast<size_t>(*s.grad_of)];
    }
  }

  // The device tensors of `views` (those listed in `pick`, or all), each once, in view order.
  std::vector<TensorId> tensors_of(const std::vector<TorchStepView>& views, const std::vector<size_t>* pick) const {
    std::vector<TensorId> out;
    for (size_t i = 0; i < views.size(); ++i) {
      if (pick != nullptr && std::find(pick->begin(), pick->end(), i) == pick->end()) continue;
      const TensorId t = tensor_of_[static_cast<size_t>(views[i].storage)];
      if (t != kNoTensor && std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    }
    return out;
  }

  uint64_t bytes_of(const std::vector<TorchStepView>& views, const std::vector<size_t>* pick) const {
    uint64_t n = 0;
    for (size_t i = 0; i < views.size(); ++i)
      if ((pick == nullptr || std::find(pick->begin(), pick->end(), i) != pick->end()) &&
          tensor_of_[static_cast<size_t>(views[i].storage)] != kNoTensor)
        n = std::min(n + view_bytes(views[i]), kMaxTensorBytes);
    return n;
  }

  // An op that writes nothing new: every output on a storage one of its inputs has, and nothing written in place.
  static bool moves_no_data(const TorchStepOp& op) {
    if (op.view) return true;
    if (op.inplace) return false;
    for (const TorchStepView& o : op.outputs) {
      const bool aliases = std::any_of(op.inputs.begin(), op.inputs.end(),
                                       [&](const TorchStepView& i) { return i.storage == o.storage; });
      if (!aliases) return false;
    }
    return !op.outputs.empty();
  }

  void make_ops(const TorchStepOp& op) {
    if (moves_no_data(op)) {
      ++out_.views;
      return;
    }
    if (workloads_internal::torch_step_allocates_only(op.name)) {
      ++out_.allocations;
      return;
    }
    const Phase phase = step_phase(op);
    if (tensors_of(op.inputs, nullptr).empty() && tensors_of(op.outputs, nullptr).empty()) {
      ++out_.host_ops;
      return;
    }
    std::vector<TorchStepPiece> pieces = workloads_internal::torch_step_pieces(op, phase);
    if (pieces.empty()) {
      ++out_.traffic_ops[op.name];
      pieces.push_back(TorchStepPiece{});  // Other, no sub-kind: the kernel model costs its bytes
    } else if (engine_grad_sum(op)) {
      pieces.front().kind = OpKind::GradAccumulate;
      pieces.front().attrs.clear();
      ++out_.grad_sums;
    }
    const std::string short_name = op.name.rfind("aten::", 0) == 0 ? op.name.substr(6) : op.name;
    for (const TorchStepPiece& p : pieces) {
      Op o;
      o.name = (op.module.empty() ? "" : op.module + "/") + short_name + "#" + std::to_string(op.id) + p.suffix;
      o.kind = p.kind;
      o.other = p.other;
      o.phase = phase;
      const std::vector<size_t>* in = p.all_views ? nullptr : &p.inputs;
      const std::vector<size_t>* out = p.all_views ? nullptr : &p.outputs;
      if (!reads_only_shapes(op.name)) o.inputs = tensors_of(op.inputs, in);
      o.outputs = tensors_of(op.outputs, out);
      if (op.inplace && p.all_views)  // what an in-place op writes is an output too (an input of the same tensor)
        for (const TorchStepView& v : op.inputs)
          if (const TensorId t = tensor_of_[static_cast<size_t>(v.storage)];
              t != kNoTensor && written_in_place(op, v) && std::find(o.outputs.begin(), o.outputs.end(), t) == o.outputs.end())
            o.outputs.push_back(t);
      o.bytes_read = reads_only_shapes(op.name) ? 0 : bytes_of(op.inputs, in);
      o.bytes_written = bytes_of(op.outputs, out);
      if (op.inplace && op.outputs.empty() && p.all_views)  // a foreach op updates its lists and returns nothing
        for (const TorchStepView& v : op.inputs)
          if (written_in_place(op, v) && tensor_of_[static_cast<size_t>(v.storage)] != kNoTensor)
            o.bytes_written = std::min(o.bytes_written + view_bytes(v), kMaxTensorBytes);
      o.flops = p.flops;
      // a foreach pass's kernels move the op's bytes (torch_step_kinds.cc's foreach_pass)
      if (o.other == OtherOp::ForeachPass)
        o.set_attr(Attr::foreach_bytes, static_cast<int64_t>(std::min(o.bytes_read + o.bytes_written, kMaxTensorBytes)));
      if (phase == Phase::Forward && op.block >= 0 && !op.recompute) o.block = static_cast<int32_t>(op.block);
      try {
        for (const auto& [a, v] : p.attrs) o.set_attr(a, v);
      } catch (const std::logic_error& e) {  // a mapping that sets an attribute its kind lacks: dlsim's defect
        throw std::logic_error("ops[" + std::to_string(op.id) + "] " + op.name + ": " + e.what());
      }
      pieces_of_[static_cast<size_t>(op.id)].push_back(out_.graph.add_op(std::move(o)));
    }
  }

  // Whether a storage was made by backward's own work: an op of the backward phase that is no checkpointed
  // module's forward replayed (a gradient, never an activation, a saved tensor or a parameter).
  bool made_by_backward(int64_t storage) const {
    const std::optional<int64_t>& at = f_.storages[static_cast<size_t>(storage)].allocated_at;
    if (!at || *at < 0 || *at >= static_cast<int64_t>(f_.ops.size())) return false;
    const TorchStepOp& maker = f_.ops[static_cast<size_t>(*at)];
    return maker.phase == "backward" && !maker.recompute;
  }

  // Autograd's engine summing the gradients of a tensor that fed several ops: when a second gradient reaches a
  // node's input buffer (torch/csrc/autograd/input_buffer.cpp, InputBuffer::accumulate), the engine adds it to the
  // first, in place (old.add_(new), or new.add_(old)) when it holds the only reference, else out of place
  // (old + new; always so on the fake tensors import-torch records with, which are tensor subclasses). It is
  // an aten::add.Tensor of alpha 1 in the backward phase, outside any module's forward (no checkpointed replay),
  // on two gradients of one shape and dtype that backward made. The engine calls it from C++ between nodes, with no
  // Python, dispatch of a node or autograd recording around it: dlsim charges it as the zoo's graphs charge their
  // GradAccumulate ops (grad_accumulate_us), not as a backward node.
  bool engine_grad_sum(const TorchStepOp& op) const {
    if ((op.name != "aten::add" && op.name != "aten::add_") || op.phase != "backward" || op.recompute) return false;
    if (op.inputs.size() != 2 || op.outputs.size() != 1) return false;
    if (const TorchStepArg* alpha = op.arg("alpha")) {
      const bool one = alpha->number ? *alpha->number == 1 : alpha->ints.size() == 1 && alpha->ints[0] == 1;
      if (!one) return false;
    }
    const TorchStepView &a = op.inputs[0], &b = op.inputs[1], &y = op.outputs[0];
    if (a.shape != b.shape || a.dtype != b.dtype || y.shape != a.shape || y.dtype != a.dtype) return false;
    return made_by_backward(a.storage) && made_by_backward(b.storage);
  }

  // ones_like(loss), the gradient's seed, and its kin read their input's shape and dtype, not its data: the input
  // is no use that keeps it alive.
  static bool reads_only_shapes(const std::string& name) {
    static const char* kShapeOnly[] = {"aten::ones_like", "aten::zeros_like", "aten::full_like", "aten::empty_like",
                                       "aten::rand_like", "aten::randn_like", "aten::new_zeros", "aten::new_ones",
                                       "aten::new_full", "aten::new_empty", "aten::new_empty_strided"};
    return std::find(std::begin(kShapeOnly), std::end(kShapeOnly), name) != std::end(kShapeOnly);
  }

  // Whether an in-place op writes the storage of input view `v`: its outputs name that storage, or (a foreach
  // op's self list, an out= argument) it returns nothing and `v` is one of the lists it updates.
  static bool written_in_place(const TorchStepOp& op, const TorchStepView& v) {
    for (const TorchStepView& o : op.outputs)
      if (o.storage == v.storage) return true;
    if (!op.outputs.empty()) return false;
    return v.arg == "self" || v.arg.rfind("self[", 0) == 0 || v.arg == "out" || v.arg.rfind("out[", 0) == 0;
  }

  // The dlsim ops of recorded op `id`, or of the first op after it that became some (a view or allocation
  // between the unpacking and the kernel makes none); empty when none follow within a few ops.
  const std::vector<OpId>* pieces_from(int64_t id) const {
    for (int64_t k = id; k < static_cast<int64_t>(pieces_of_.size()) && k < id + 16; ++k)
      if (!pieces_of_[static_cast<size_t>(k)].empty()) return &pieces_of_[static_cast<size_t>(k)];
    return nullptr;
  }

  void attach_saved() {
    for (const TorchStepSaved& s : f_.saved) {
      const TensorId t = tensor_of_[static_cast<size_t>(s.storage)];
      if (t == kNoTensor || !s.used_by) continue;
      const std::vector<OpId>* users = pieces_from(*s.used_by);
      if (users == nullptr) continue;
      Op& user = out_.graph.op(users->front());
      if (user.phase != Phase::Backward) continue;
      if (std::find(user.inputs.begin(), user.inputs.end(), t) == user.inputs.end()) {
        user.inputs.push_back(t);
        ++out_.saved_attached;
      }
      if (s.saved_by && !pieces_of_[static_cast<size_t>(*s.saved_by)].empty())
        for (OpId u : *users)
          if (out_.graph.op(u).forward_op < 0) out_.graph.op(u).forward_op = pieces_of_[static_cast<size_t>(*s.saved_by)].front();
    }
  }

  // dlsim frees a tensor after its last use; PyTorch frees a storage when its last reference goes, which may be
  // later (a leaf's .grad until zero_grad, what a loop keeps, a saved tensor autograd has not released yet). Each
  // transient tensor is held to the last op that ran before the recorded free (the step's last op when it outlives
  // the step): that op takes it as an input, so every lowering frees it where PyTorch did.
  void hold_to_recorded_frees() {
    const auto& ops = out_.graph.ops();
    if (ops.empty()) return;
    std::vector<int64_t> last_use(out_.graph.tensors().size(), -1);
    for (const Op& o : ops) {
      for (TensorId t : o.inputs) last_use[static_cast<size_t>(t)] = o.id;
      for (TensorId t : o.outputs) last_use[static_cast<size_t>(t)] = o.id;
    }
    // The last dlsim op made from a recorded op before each recorded position.
    std::vector<OpId> last_before(f_.ops.size() + 1, -1);
    for (size_t k = 0; k < f_.ops.size(); ++k) {
      last_before[k + 1] = last_before[k];
      if (!pieces_of_[k].empty()) last_before[k + 1] = pieces_of_[k].back();
    }
    for (const TorchStepStorage& s : f_.storages) {
      const TensorId t = tensor_of_[static_cast<size_t>(s.id)];
      if (t == kNoTensor || out_.graph.tensor(t).persistent || last_use[static_cast<size_t>(t)] < 0) continue;
      const OpId holder = last_before[static_cast<size_t>(s.freed_at.value_or(static_cast<int64_t>(f_.ops.size())))];
      if (holder <= last_use[static_cast<size_t>(t)]) continue;
      out_.graph.op(holder).inputs.push_back(t);
      ++out_.held_past_last_use;
      out_.held_bytes += s.bytes;
    }
  }

  const TorchStepFile& f_;
  TorchStepLoad out_;
  std::vector<TensorId> tensor_of_;  // storage id -> tensor (kNoTensor: host memory or empty)
  std::vector<std::vector<OpId>> pieces_of_;  // recorded op -> dlsim's ops made from it
};

}  // namespace

TorchStepLoad torch_step_graph(const TorchStepFile& file) { return StepGraphBuilder(file).build(); }

TorchStepLoad load_torch_step(const std::string& path, int64_t max_ops) {
  return torch_step_graph(read_torch_step(path, max_ops));
}

}  // namespace dlsim
