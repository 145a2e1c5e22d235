// ONNX import: loads the file with libonnx's protobuf classes and walks the nodes in their (topological) file
// order, turning each into ModelBuilder layers (onnx_import_ops.cc). Shapes are propagated by the builder
// itself from the data input's shape (its batch axis replaced by ModelOptions::batch) and the weights'
// declared shapes, so onnx::shape_inference is not needed; shape arithmetic the exporter writes for Reshape
// targets (Shape, Gather, Unsqueeze, Concat, Cast, Slice, ...) is folded into constants here. Weights may be
// initializers or, with export_params=False, graph inputs: a graph input becomes the data batch when a layer
// reads it as an activation and a weight when a layer reads it as one. The model's first output is taken as
// the logits and a cross-entropy loss is appended, as the zoo's builders end.
#include "workloads/onnx_import.h"

#include "common/config_error.h"
#include "common/input_file.h"

#ifdef DLSIM_WITH_ONNX
#include <cstring>
#include <fstream>
#include <iterator>

#include "workloads/internal/onnx_importer.h"
#include "workloads/shape.h"
#endif

namespace dlsim {

#ifndef DLSIM_WITH_ONNX

bool onnx_import_available() { return false; }

Graph import_onnx_forward(const std::string& path, const ModelOptions&) {
  throw ConfigError(path, 0, "model", "dlsim was built without ONNX support (libonnx-dev not found at configure time)");
}

Graph import_onnx_forward_from_bytes(const std::string&, const std::string& name, const ModelOptions& opts, int) {
  return import_onnx_forward(name, opts);
}

#else

namespace workloads_internal {

namespace {

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

DType dtype_of(int elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT: return DType::F32;
    case onnx::TensorProto::FLOAT16: return DType::F16;
    case onnx::TensorProto::BFLOAT16: return DType::BF16;
    case onnx::TensorProto::INT64: return DType::I64;
    case onnx::TensorProto::INT32: return DType::I32;
    case onnx::TensorProto::UINT8: return DType::U8;
    case onnx::TensorProto::BOOL: return DType::Bool;
    default: return DType::F32;
  }
}

bool is_integer_type(int t) {
  return t == onnx::TensorProto::INT64 || t == onnx::TensorProto::INT32 || t == onnx::TensorProto::INT16 ||
         t == onnx::TensorProto::INT8 || t == onnx::TensorProto::UINT8 || t == onnx::TensorProto::BOOL;
}

// Values small enough to fold (shape arithmetic, scalars); larger ones are weights or masks.
constexpr int64_t kMaxFoldedElements = 1 << 22;

template <typename T>
std::vector<double> raw_values(const std::string& raw, int64_t n, const std::string& file, const std::string& what) {
  if (raw.size() != static_cast<size_t>(n) * sizeof(T))
    throw ConfigError(file, 0, what, "raw_data holds " + std::to_string(raw.size()) + " bytes for " + std::to_string(n) + " elements");
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, raw.data() + static_cast<size_t>(i) * sizeof(T), sizeof(T));
    out[static_cast<size_t>(i)] = static_cast<double>(v);
  }
  return out;
}

}  // namespace

int64_t attr_int(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  const auto* a = find_attr(n, name);
  return a ? a->i() : fallback;
}
float attr_float(const onnx::NodeProto& n, const std::string& name, float fallback) {
  const auto* a = find_attr(n, name);
  return a ? a->f() : fallback;
}
std::string attr_string(const onnx::NodeProto& n, const std::string& name, const std::string& fallback) {
  const auto* a = find_attr(n, name);
  return a ? a->s() : fallback;
}
std::vector<int64_t> attr_ints(const onnx::NodeProto& n, const std::string& name, std::vector<int64_t> fallback) {
  const auto* a = find_attr(n, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
}
bool has_attr(const onnx::NodeProto& n, const std::string& name) { return find_attr(n, name) != nullptr; }

Value tensor_value(const onnx::TensorProto& t, const std::string& file, const std::string& what) {
  Value v;
  v.kind = Value::Kind::Constant;
  v.shape.assign(t.dims().begin(), t.dims().end());
  for (int64_t d : v.shape)
    if (d < 0) throw ConfigError(file, 0, what, "tensor has a negative dimension");
  const std::optional<int64_t> count = checked_numel(v.shape);
  if (!count) throw ConfigError(file, 0, what, "tensor of shape " + shape_str(v.shape) + " has more than 2^63 elements");
  const int64_t n = *count;
  if (n > kMaxFoldedElements) throw ConfigError(file, 0, what, "constant of " + std::to_string(n) + " elements is too large to fold");
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    throw ConfigError(file, 0, what, "constant stored as external data, which the importer does not read");
  v.integer = is_integer_type(t.data_type());
  const std::string& raw = t.raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      v.data = t.has_raw_data() ? raw_values<float>(raw, n, file, what) : std::vector<double>(t.float_data().begin(), t.float_data().end());
      break;
    case onnx::TensorProto::DOUBLE:
      v.data = t.has_raw_data() ? raw_values<double>(raw, n, file, what) : std::vector<double>(t.double_data().begin(), t.double_data().end());
      break;
    case onnx::TensorProto::INT64:
      v.data = t.has_raw_data() ? raw_values<int64_t>(raw, n, file, what) : std::vector<double>(t.int64_data().begin(), t.int64_data().end());
      break;
    case onnx::TensorProto::INT32:
      v.data = t.has_raw_data() ? raw_values<int32_t>(raw, n, file, what) : std::vector<double>(t.int32_data().begin(), t.int32_data().end());
      break;
    case onnx::TensorProto::BOOL:
    case onnx::TensorProto::UINT8:
      v.data = t.has_raw_data() ? raw_values<uint8_t>(raw, n, file, what) : std::vector<double>(t.int32_data().begin(), t.int32_data().end());
      break;
    default:
      throw ConfigError(file, 0, what, "constant of ONNX data type " + std::to_string(t.data_type()) + " is not supported");
  }
  if (static_cast<int64_t>(v.data.size()) != n)
    throw ConfigError(file, 0, what, "tensor holds " + std::to_string(v.data.size()) + " values for " + std::to_string(n) + " elements");
  return v;
}

Importer::Importer(std::string path, const onnx::ModelProto& model, const ModelOptions& opts)
    : path_(std::move(path)),
      model_(model),
      opts_(opts),
      // Named by its path, so that the builder's own errors (bad sizes) name the file and the node.
      b_(path_, opts.batch, build_options(opts.training)) {
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
  if (opset_ == 0) throw ConfigError(path_, 0, "opset_import", "the model declares no opset of the default ONNX domain");
}

void Importer::add_initializer(const onnx::TensorProto& t) {
  Value v;
  if (is_integer_type(t.data_type())) {
    v = tensor_value(t, path_, t.name());  // shape arithmetic, position ids, ...
  } else {
    v.kind = Value::Kind::Param;
    v.shape.assign(t.dims().begin(), t.dims().end());
    v.source = t.name();
    // Checked before anything reads its size: a weight of 2^70 elements must be an error, not a wrapped count
    // (the builder refuses any tensor above kMaxTensorBytes when the weight is used).
    for (int64_t d : v.shape)
      if (d < 0) throw ConfigError(path_, 0, t.name(), "initializer has a negative dimension");
    const std::optional<int64_t> n = checked_numel(v.shape);
    if (!n || static_cast<uint64_t>(*n) > kMaxTensorBytes)
      throw ConfigError(path_, 0, t.name(), "initializer of shape " + shape_str(v.shape) +
                                                " holds more than 2^50 elements, dlsim's limit per tensor");
    // Scalars and short vectors keep their values so that an op may also read them as constants.
    if (numel(v.shape) <= 16 && t.data_location() != onnx::TensorProto::EXTERNAL &&
        (t.has_raw_data() || t.float_data_size() > 0 || t.double_data_size() > 0))
      v.data = tensor_value(t, path_, t.name()).data;
  }
  values_[t.name()] = std::move(v);
}

void Importer::add_graph_input(const onnx::ValueInfoProto& in) {
  Value v;
  v.kind = Value::Kind::GraphInput;
  v.source = in.name();
  if (in.type().has_tensor_type() && in.type().tensor_type().has_shape()) {
    const auto& tt = in.type().tensor_type();
    v.dtype = dtype_of(tt.elem_type());
    v.integer = is_integer_type(tt.elem_type());
    for (const auto& d : tt.shape().dim()) v.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
    v.batch_axis = !v.shape.empty() && (v.shape[0] < 0 || first_input_);
  } else {
    v.shape_known = false;  // an error when a layer reads it
  }
  first_input_ = false;
  values_[in.name()] = std::move(v);
}

std::string Importer::layer_name(const onnx::NodeProto& n) const {
  return n.name().empty() ? n.op_type() + "(" + (n.output_size() ? n.output(0) : std::string("?")) + ")" : n.name();
}

void Importer::fail(const onnx::NodeProto& n, const std::string& msg) const {
  throw ConfigError(path_, 0, layer_name(n), "ONNX op " + n.op_type() + ": " + msg);
}

const Value& Importer::value(const onnx::NodeProto& n, int i) {
  if (!has_input(n, i)) fail(n, "input " + std::to_string(i) + " is missing");
  auto it = values_.find(n.input(i));
  if (it == values_.end()) fail(n, "input '" + n.input(i) + "' is produced by no node, initializer or graph input before it");
  return it->second;
}

bool Importer::is_constant(const onnx::NodeProto& n, int i) {
  const Value& v = value(n, i);
  return v.kind == Value::Kind::Constant || (v.kind == Value::Kind::Param && !v.data.empty());
}

const Value& Importer::constant(const onnx::NodeProto& n, int i) {
  if (!is_constant(n, i)) fail(n, "input '" + n.input(i) + "' must be known at import time (a Constant or an initializer)");
  return value(n, i);
}

TensorId Importer::activation(const onnx::NodeProto& n, int i) {
  (void)value(n, i);  // fails when missing
  Value& v = values_.at(n.input(i));
  switch (v.kind) {
    case Value::Kind::Activation: return v.tensor;
    case Value::Kind::GraphInput: {
      if (!v.shape_known || v.shape.empty()) fail(n, "graph input '" + n.input(i) + "' has no shape");
      std::vector<int64_t> shape = v.shape;
      for (size_t d = v.batch_axis ? 1 : 0; d < shape.size(); ++d)
        if (shape[d] <= 0) fail(n, "graph input '" + n.input(i) + "' has an unknown dimension " + std::to_string(d) + " (only the batch axis may be symbolic)");
      if (v.batch_axis) shape[0] = opts_.batch;  // the experiment's batch size
      v.kind = Value::Kind::Activation;
      v.tensor = b_.input(shape, v.dtype, n.input(i));
      return v.tensor;
    }
    case Value::Kind::Param: fail(n, "reads weight '" + n.input(i) + "' where it needs an activation");
    case Value::Kind::Constant: fail(n, "reads constant '" + n.input(i) + "' where it needs an activation");
  }
  fail(n, "bad value kind");
}

const Value& Importer::param(const onnx::NodeProto& n, int i) {
  (void)value(n, i);
  Value& v = values_.at(n.input(i));
  if (v.kind == Value::Kind::GraphInput) {
    if (!v.shape_known) fail(n, "weight '" + n.input(i) + "' (a graph input) has no shape");
    for (int64_t d : v.shape)
      if (d <= 0) fail(n, "weight '" + n.input(i) + "' has a symbolic or missing dimension");
    v.kind = Value::Kind::Param;
    v.data.clear();
  }
  if (v.kind != Value::Kind::Param) fail(n, "input '" + n.input(i) + "' must be a weight (an initializer or graph input)");
  return v;
}

void Importer::set(const onnx::NodeProto& n, int output, Value v) {
  if (output < n.output_size() && !n.output(output).empty()) values_[n.output(output)] = std::move(v);
}

void Importer::set_activation(const onnx::NodeProto& n, int output, TensorId t) {
  Value v;
  v.tensor = t;
  set(n, output, std::move(v));
}

TensorId Importer::constant_input(const onnx::NodeProto& n, int i) {
  const Value& v = constant(n, i);
  auto it = constant_inputs_.find(n.input(i));
  if (it != constant_inputs_.end()) return it->second;
  std::vector<int64_t> s = v.shape.empty() ? std::vector<int64_t>{1} : v.shape;
  return constant_inputs_[n.input(i)] = b_.input(s, DType::F32, n.input(i));
}

TensorId Importer::existing_weight(const Value& p) const {
  auto it = weights_.find(p.source);
  return it == weights_.end() ? kNoTensor : it->second;
}

void Importer::remember_weight(const Value& p, TensorId w) { weights_[p.source] = w; }

size_t Importer::consumers(const std::string& value) const {
  auto it = readers_.find(value);
  return (it == readers_.end() ? 0 : it->second.size()) + graph_outputs_.count(value);
}

const onnx::NodeProto* Importer::sole_consumer(const std::string& value) const {
  if (consumers(value) != 1 || graph_outputs_.count(value)) return nullptr;
  return readers_.at(value).front();
}

Graph Importer::run() {
  const onnx::GraphProto& g = model_.graph();
  if (g.node_size() == 0) throw ConfigError(path_, 0, "graph", "the model's graph has no nodes");
  // Checked before any node is read: each becomes one or more ops of the forward graph and about three in the
  // training graph, each with its tensors.
  if (g.node_size() > opts_.max_graph_nodes || g.initializer_size() > opts_.max_graph_nodes)
    throw ConfigError(path_, 0, "graph",
                      "the graph has " + std::to_string(g.node_size()) + " nodes and " +
                          std::to_string(g.initializer_size()) + " initializers, above the limit of " +
                          std::to_string(opts_.max_graph_nodes) +
                          "; raise it with `max_graph_nodes:` in the experiment or `dlsim model --max-graph-nodes N`");
  if (g.output_size() == 0) throw ConfigError(path_, 0, "graph", "the model's graph has no outputs");
  for (const auto& t : g.initializer()) add_initializer(t);
  for (const auto& in : g.input())
    if (!values_.count(in.name())) add_graph_input(in);
  for (const auto& n : g.node())
    for (const auto& in : n.input())
      if (!in.empty()) readers_[in].push_back(&n);
  for (const auto& o : g.output()) graph_outputs_.insert(o.name());
  // Constant nodes read nothing: evaluating them first lets a pattern (GELU) look at constants that the file
  // lists after the pattern's first node.
  for (const auto& n : g.node())
    if (n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx")) {
      try {
        handle(n);
      } catch (const ConfigError& e) {
        if (e.file() == path_) throw;
        throw ConfigError(path_, 0, layer_name(n), std::string("ONNX op Constant: ") + e.what());
      }
      skip(n);
    }
  for (const auto& n : g.node()) {
    if (skipped_.count(&n)) continue;
    if (!n.domain().empty() && n.domain() != "ai.onnx") fail(n, "op of custom domain '" + n.domain() + "' is not supported");
    try {
      handle(n);
    } catch (const ConfigError& e) {
      if (e.file() == path_) throw;
      throw ConfigError(path_, 0, layer_name(n), "ONNX op " + n.op_type() + ": " + e.what());
    } catch (const std::exception& e) {
      throw ConfigError(path_, 0, layer_name(n), "ONNX op " + n.op_type() + ": " + e.what());
    }
  }
  if (has_loss_) return b_.finish();  // the file computes its own loss (SoftmaxCrossEntropyLoss)
  const std::string& out = g.output(0).name();
  auto it = values_.find(out);
  if (it == values_.end() || it->second.kind != Value::Kind::Activation)
    throw ConfigError(path_, 0, out, "the model's first output is not computed from its input");
  try {
    b_.cross_entropy_loss(it->second.tensor, "loss");
  } catch (const ConfigError& e) {
    throw ConfigError(path_, 0, out, std::string("cannot append the loss to the first output: ") + e.what());
  }
  return b_.finish();
}

}  // namespace workloads_internal

bool onnx_import_available() { return true; }

Graph import_onnx_forward(const std::string& path, const ModelOptions& opts) {
  if (opts.batch <= 0) throw ConfigError(path, 0, "batch", "batch size must be positive, got " + std::to_string(opts.batch));
  return import_onnx_forward_from_bytes(read_input_file(path), path, opts);
}

Graph import_onnx_forward_from_bytes(const std::string& bytes, const std::string& name, const ModelOptions& opts,
                                     int max_nodes) {
  if (opts.batch <= 0) throw ConfigError(name, 0, "batch", "batch size must be positive, got " + std::to_string(opts.batch));
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    throw ConfigError(name, 0, "", "not a valid ONNX model: the protobuf does not parse (corrupt or truncated file?)");
  if (!model.has_graph()) throw ConfigError(name, 0, "graph", "the ONNX model has no graph");
  if (max_nodes > 0 && model.graph().node_size() > max_nodes)
    throw ConfigError(name, 0, "graph", "the graph has " + std::to_string(model.graph().node_size()) +
                                            " nodes, more than the limit of " + std::to_string(max_nodes));
  return workloads_internal::Importer(name, model, opts).run();
}

#endif

}  // namespace dlsim
