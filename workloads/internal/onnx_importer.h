#pragma once
// DO NOT INCLUDE THIS FILE outside the ONNX importer: its internals, not an API (the API is
// workloads/onnx_import.h).
//
// The ONNX importer's internals (onnx_import.cc: loading and the value table; onnx_import_ops.cc: layers,
// one handler per ONNX op; onnx_import_values.cc: shape plumbing and constant folding). Only compiled with
// DLSIM_WITH_ONNX. Public entry point: onnx_import.h.
#ifdef DLSIM_WITH_ONNX
#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "workloads/model_builder.h"
#include "workloads/model_options.h"

namespace dlsim::workloads_internal {

// What an ONNX value name stands for during the import.
struct Value {
  enum class Kind {
    Activation,  // a tensor of the forward graph (tensor)
    Param,       // a weight: an initializer, or a graph input that a layer uses as its weight (shape)
    Constant,    // a value known at import time: Constant nodes, integer initializers, folded shape arithmetic
    GraphInput,  // a graph input not used yet: the data batch or a weight (export_params=False)
  };
  Kind kind = Kind::Activation;
  TensorId tensor = kNoTensor;  // Activation; a Param once a layer has created its weight
  std::vector<int64_t> shape;   // Param, Constant, GraphInput (-1: a symbolic dimension)
  std::vector<double> data;     // Constant (row-major)
  bool integer = false;         // Constant: integer-typed
  DType dtype = DType::F32;     // GraphInput
  bool shape_known = true;      // GraphInput: false when the file declares no shape for it
  bool batch_axis = false;      // GraphInput: axis 0 is the batch (symbolic, or the first input), set to opts.batch
  std::string source;           // Param: the initializer / graph input it comes from (a Transpose keeps it)
  // Activation: a fused projection that a Split will cut (GPT-2's c_attn): one tensor per part, no `tensor`.
  std::vector<TensorId> parts;
};

class Importer {
 public:
  Importer(std::string path, const onnx::ModelProto& model, const ModelOptions& opts);
  Graph run();

  // --- used by the op handlers (onnx_import_ops.cc)
  [[noreturn]] void fail(const onnx::NodeProto& n, const std::string& msg) const;
  bool has_input(const onnx::NodeProto& n, int i) const { return i < n.input_size() && !n.input(i).empty(); }
  const Value& value(const onnx::NodeProto& n, int i);
  TensorId activation(const onnx::NodeProto& n, int i);          // the data batch is materialised on first use
  const Value& param(const onnx::NodeProto& n, int i);          // a weight with a fully known shape
  const Value& constant(const onnx::NodeProto& n, int i);       // a value known at import time
  bool is_constant(const onnx::NodeProto& n, int i);
  void set(const onnx::NodeProto& n, int output, Value v);
  void set_activation(const onnx::NodeProto& n, int output, TensorId t);
  // The builder tensor of a weight some layer already created (tied weights), else kNoTensor.
  TensorId existing_weight(const Value& p) const;
  void remember_weight(const Value& p, TensorId w);
  // The only node reading `value` (nullptr when none or several read it, or it is a graph output).
  const onnx::NodeProto* sole_consumer(const std::string& value) const;
  size_t consumers(const std::string& value) const;
  void skip(const onnx::NodeProto& n) { skipped_.insert(&n); }  // fused into an earlier node's layer
  std::string layer_name(const onnx::NodeProto& n) const;
  // A constant operand of an elementwise layer (a scale, a mask) as one non-learnable input tensor.
  TensorId constant_input(const onnx::NodeProto& n, int i);
  void loss_emitted() { has_loss_ = true; }
  int64_t opset() const { return opset_; }
  ModelBuilder& builder() { return b_; }

 private:
  std::string path_;
  const onnx::ModelProto& model_;
  ModelOptions opts_;
  ModelBuilder b_;
  int64_t opset_ = 0;
  std::map<std::string, Value> values_;
  std::map<std::string, TensorId> weights_;  // source name -> builder weight
  std::map<std::string, std::vector<const onnx::NodeProto*>> readers_;
  std::set<std::string> graph_outputs_;
  std::set<const onnx::NodeProto*> skipped_;
  std::map<std::string, TensorId> constant_inputs_;
  bool has_loss_ = false;
  bool first_input_ = true;

  void add_initializer(const onnx::TensorProto& t);
  void add_graph_input(const onnx::ValueInfoProto& in);
  void handle(const onnx::NodeProto& n);  // onnx_import_ops.cc
};

// Attribute helpers.
int64_t attr_int(const onnx::NodeProto& n, const std::string& name, int64_t fallback);
float attr_float(const onnx::NodeProto& n, const std::string& name, float fallback);
std::string attr_string(const onnx::NodeProto& n, const std::string& name, const std::string& fallback);
std::vector<int64_t> attr_ints(const onnx::NodeProto& n, const std::string& name, std::vector<int64_t> fallback);
bool has_attr(const onnx::NodeProto& n, const std::string& name);
// A TensorProto's values (integers and floats alike as doubles); `what` names it in errors.
Value tensor_value(const onnx::TensorProto& t, const std::string& file, const std::string& what);

// Value plumbing and constant folding (onnx_import_values.cc), shared with the layer handlers.
namespace values {
Value constant_of(std::vector<int64_t> shape, std::vector<double> data, bool integer);
int64_t norm_axis(Importer& im, const onnx::NodeProto& n, int64_t axis, size_t rank);
std::vector<int64_t> ints_of(const Value& v);  // saturated at the int64 range
std::vector<int64_t> axes_of(Importer& im, const onnx::NodeProto& n);
Value fold_binary(Importer& im, const onnx::NodeProto& n, const Value& a, const Value& b);
// Handlers.
void concat(Importer& im, const onnx::NodeProto& n);
void reshape(Importer& im, const onnx::NodeProto& n);
void transpose(Importer& im, const onnx::NodeProto& n);
void gather(Importer& im, const onnx::NodeProto& n);
void shape(Importer& im, const onnx::NodeProto& n);
void unsqueeze_squeeze(Importer& im, const onnx::NodeProto& n);
void slice(Importer& im, const onnx::NodeProto& n);
void split(Importer& im, const onnx::NodeProto& n);
void constant_of_shape(Importer& im, const onnx::NodeProto& n);
void where(Importer& im, const onnx::NodeProto& n);
void expand(Importer& im, const onnx::NodeProto& n);
void constant(Importer& im, const onnx::NodeProto& n);
void identity_or_cast(Importer& im, const onnx::NodeProto& n);
}  // namespace values

}  // namespace dlsim::workloads_internal
#endif
