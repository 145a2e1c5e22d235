#include "workloads/graph.h"

#include <algorithm>
#include <stdexcept>

namespace dlsim {

uint32_t dtype_bytes(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::BF16: return 2;
    case DType::F16: return 2;
    case DType::I64: return 8;
    case DType::I32: return 4;
    case DType::U8: return 1;
    case DType::Bool: return 1;
  }
  return 0;
}

const char* to_string(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::BF16: return "bf16";
    case DType::F16: return "f16";
    case DType::I64: return "i64";
    case DType::I32: return "i32";
    case DType::U8: return "u8";
    case DType::Bool: return "bool";
  }
  return "?";
}

const char* to_string(TensorKind k) {
  switch (k) {
    case TensorKind::Weight: return "weight";
    case TensorKind::Gradient: return "gradient";
    case TensorKind::OptimizerState: return "optimizer_state";
    case TensorKind::Activation: return "activation";
    case TensorKind::Workspace: return "workspace";
    case TensorKind::Input: return "input";
  }
  return "?";
}

const char* to_string(Phase p) {
  switch (p) {
    case Phase::Forward: return "forward";
    case Phase::Backward: return "backward";
    case Phase::Optimizer: return "optimizer";
  }
  return "?";
}

namespace {

std::string kind_name(const Op& op) {
  std::string k = to_string(op.kind);
  if (op.other != OtherOp::None) k += std::string("/") + to_string(op.other);
  return k;
}

[[noreturn]] void attr_error(const Op& op, const std::string& what) {
  throw std::logic_error("op '" + op.name + "' (" + kind_name(op) + ") " + what +
                         " (workloads/op_attributes.cc declares the attributes of each op kind)");
}

// The declaration of `a` for the op; an error when its kind does not declare it, or declares it of the other
// shape (a list attribute read as one value, or one value read by index).
const AttrDecl& declaration(const Op& op, Attr a, bool as_list) {
  const AttrDecl* d = find_declaration(op.kind, op.other, a);
  if (!d) attr_error(op, std::string("has no attribute '") + to_string(a) + "'");
  if (is_list(a) != as_list)
    attr_error(op, std::string("attribute '") + to_string(a) +
                       (as_list ? "' is no list" : "' is a list: give an index"));
  if (!may_carry(op.kind, op.other)) attr_error(op, "cannot be of that sub-kind");
  return *d;
}

}  // namespace

int64_t Op::attr(Attr a) const {
  const AttrDecl& d = declaration(*this, a, false);
  if (auto it = attrs.a_.find(to_string(a)); it != attrs.a_.end()) return it->second;
  if (!d.default_value)
    attr_error(*this, std::string("does not set attribute '") + to_string(a) + "', which has no default");
  return *d.default_value;
}

bool Op::has_attr(Attr a) const {
  declaration(*this, a, false);
  return attrs.a_.count(to_string(a)) != 0;
}

void Op::set_attr(Attr a, int64_t value) {
  declaration(*this, a, false);
  attrs.a_[to_string(a)] = value;
}

int64_t Op::attr(Attr a, size_t index) const {
  declaration(*this, a, true);
  auto it = attrs.a_.find(stored_name(a, index));
  if (it == attrs.a_.end()) attr_error(*this, "does not set attribute '" + stored_name(a, index) + "'");
  return it->second;
}

bool Op::has_attr(Attr a, size_t index) const {
  declaration(*this, a, true);
  return attrs.a_.count(stored_name(a, index)) != 0;
}

void Op::set_attr(Attr a, size_t index, int64_t value) {
  declaration(*this, a, true);
  attrs.a_[stored_name(a, index)] = value;
}

std::vector<int64_t> Op::attr_list(Attr a) const {
  std::vector<int64_t> v;
  while (has_attr(a, v.size())) v.push_back(attr(a, v.size()));
  return v;
}

void Op::set_attr_list(Attr a, const std::vector<int64_t>& values) {
  for (size_t i = 0; i < values.size(); ++i) set_attr(a, i, values[i]);
}

bool Op::declares(Attr a) const { return may_carry(kind, other) && find_declaration(kind, other, a) != nullptr; }

std::map<std::string, int64_t> Op::written_attributes() const {
  std::map<std::string, int64_t> w = attrs.a_;
  if (other != OtherOp::None) w[to_string(other)] = 1;
  return w;
}

TensorId Graph::add_tensor(Tensor t) {
  t.id = static_cast<TensorId>(tensors_.size());
  tensors_.push_back(std::move(t));
  return tensors_.back().id;
}

OpId Graph::add_op(Op o) {
  o.id = static_cast<OpId>(ops_.size());
  ops_.push_back(std::move(o));
  return ops_.back().id;
}

// One pass over the ops in issue order, remembering per tensor its last writer and the readers since that
// write: linear in the number of tensor accesses. Edges are deduplicated per target op.
std::vector<TensorId> Graph::replay_inputs(const Op& op) const {
  std::vector<TensorId> in = op.inputs;
  if (replay_source.empty()) return in;
  for (TensorId& t : in)
    if (auto it = replay_source.find(t); it != replay_source.end()) t = it->second;
  return in;
}

Graph::Dag Graph::dag() const {
  Dag d(ops_.size());
  std::vector<OpId> last_writer(tensors_.size(), -1);
  std::vector<std::vector<OpId>> readers(tensors_.size());
  std::vector<OpId> sources;
  for (const Op& v : ops_) {
    sources.clear();
    for (TensorId t : v.inputs)
      if (last_writer[t] >= 0) sources.push_back(last_writer[t]);
    for (TensorId t : v.outputs) {
      if (last_writer[t] >= 0) sources.push_back(last_writer[t]);
      for (OpId r : readers[t]) sources.push_back(r);
    }
    std::sort(sources.begin(), sources.end());
    sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
    for (OpId u : sources)
      if (u != v.id) boost::add_edge(static_cast<size_t>(u), static_cast<size_t>(v.id), d);
    for (TensorId t : v.outputs) {
      last_writer[t] = v.id;
      readers[t].clear();
    }
    // Reads are recorded after the writes so that an in-place op (reads and writes t) is not its own reader;
    // an op that only reads t is remembered for the anti-dependence of t's next writer.
    for (TensorId t : v.inputs)
      if (std::find(v.outputs.begin(), v.outputs.end(), t) == v.outputs.end()) readers[t].push_back(v.id);
  }
  return d;
}

}  // namespace dlsim
