// Reading a trace file (docs/torch-step.md): nlohmann::json parses it, then every record is read field by field
// through TorchStepField, which knows the record's path ("ops[12].inputs[0]") so that an error names the file, the
// record and the field. References between records (an op's storage, a storage's gradient-of, a saved tensor's op)
// are checked once every record is read, so that the graph builder can index without checking again.
#include "workloads/torch_step.h"

#include <nlohmann/json.hpp>

#include <limits>

#include "common/config_error.h"
#include "common/json_fields.h"
#include "common/input_file.h"
#include "workloads/shape.h"

namespace dlsim {

bool is_torch_step_path(const std::string& path) {
  const std::string suffix = kTorchStepSuffix;
  return path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

const TorchStepArg* TorchStepOp::arg(const std::string& n) const {
  for (const TorchStepArg& a : args)
    if (a.name == n) return &a;
  return nullptr;
}

namespace {

using Json = nlohmann::json;

// One record (an object) of the file (common/json_fields.h), with the trace's own conveniences: optional fields
// with their defaults, lists of integers, and records and elements read as records in turn.
class TorchStepField : public JsonFields {
 public:
  TorchStepField(const Json& j, std::string file, std::string path) : JsonFields(j, std::move(file), std::move(path)) {
    require_object();
  }

  std::string string_or(const std::string& field, const std::string& fallback) const {
    return has(field) ? text(field) : fallback;
  }
  int64_t integer(const std::string& field, int64_t lo = std::numeric_limits<int64_t>::min(),
                  int64_t hi = std::numeric_limits<int64_t>::max()) const {
    return JsonFields::integer(field, lo, hi);
  }
  std::optional<int64_t> optional_integer(const std::string& field, int64_t lo, int64_t hi) const {
    if (!has(field)) return std::nullopt;
    return integer(field, lo, hi);
  }
  bool flag(const std::string& field) const { return has(field) && JsonFields::flag(field); }  // absent: false
  std::vector<int64_t> integers(const std::string& field, int64_t lo, int64_t hi) const {
    const Json& v = array(field);
    std::vector<int64_t> out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) out.push_back(integer_of(v[i], field + "[" + std::to_string(i) + "]", lo, hi));
    return out;
  }
  // The array at `field` (an empty one when `optional` and absent).
  const Json& array(const std::string& field, bool optional = false) const {
    static const Json empty = Json::array();
    if (optional && !has(field)) return empty;
    return JsonFields::array(field);
  }
  TorchStepField record(const std::string& field) const { return TorchStepField(at(field), file(), key(field)); }
  TorchStepField element(const Json& arr, const std::string& field, size_t i) const {
    return TorchStepField(arr[i], file(), key(field) + "[" + std::to_string(i) + "]");
  }
};

constexpr int64_t kMaxRank = 16;      // dimensions of one tensor
constexpr int64_t kMaxDim = int64_t{1} << 50;

TorchStepView read_view(const TorchStepField& f, bool input) {
  TorchStepView v;
  v.storage = f.integer("storage", 0);
  v.dtype = f.text("dtype");
  v.shape = f.integers("shape", 0, kMaxDim);
  v.stride = f.integers("stride", -kMaxDim, kMaxDim);
  if (static_cast<int64_t>(v.shape.size()) > kMaxRank) f.fail("shape", "more than 16 dimensions");
  if (v.stride.size() != v.shape.size())
    f.fail("stride", std::to_string(v.stride.size()) + " strides for " + std::to_string(v.shape.size()) + " dimensions");
  if (!checked_numel(v.shape)) f.fail("shape", "more than 2^63 elements");
  v.offset = f.integer("offset", 0, kMaxDim);
  if (input)
    v.arg = f.string_or("arg", "");
  else
    v.result = f.integer("result", 0, 1 << 20);
  return v;
}

// The integer, boolean and floating-point arguments (and lists of integers); others (strings, dtypes) are skipped.
std::vector<TorchStepArg> read_args(const TorchStepField& op) {
  std::vector<TorchStepArg> out;
  if (!op.has("args")) return out;
  const Json& args = op.at("args");
  if (!args.is_object()) op.fail("args", std::string("expected an object, got ") + args.type_name());
  for (const auto& [name, v] : args.items()) {
    TorchStepArg a;
    a.name = name;
    if (v.is_boolean()) {
      a.ints = {v.get<bool>() ? 1 : 0};
    } else if (v.is_number_integer()) {
      a.ints = {op.record("args").integer(name)};
    } else if (v.is_number_float()) {
      a.number = v.get<double>();
    } else if (v.is_array() && !v.empty() && v.front().is_number_integer()) {
      a.ints = op.record("args").integers(name, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
      a.is_list = true;
    } else {
      continue;
    }
    out.push_back(std::move(a));
  }
  return out;
}

void check_storage_ref(const TorchStepField& f, const std::string& field, int64_t id, size_t storages) {
  if (id < 0 || static_cast<size_t>(id) >= storages)
    f.fail(field, "names storage " + std::to_string(id) + ", but the file has " + std::to_string(storages));
}

void read_header(const TorchStepField& top, TorchStepFile& out) {
  const Json& format = top.at("format");
  if (!format.is_string() || format.get<std::string>() != kTorchStepFormat)
    top.fail("format", std::string("not a dlsim trace file: expected format '") + kTorchStepFormat + "', got " +
                           (format.is_string() ? "'" + format.get<std::string>() + "'" : std::string(format.type_name())));
  const int64_t version = top.integer("version");
  if (version != kTorchStepVersion)
    top.fail("version", "version " + std::to_string(version) + " of the format; this dlsim reads version " +
                            std::to_string(kTorchStepVersion) + " (record the step again with this dlsim's import-torch)");
  const TorchStepField step = top.record("step");
  out.spec = step.text("spec");
  out.model = step.text("model");
  out.precision = step.text("precision");
  out.optimizer = step.text("optimizer");
  out.batch = step.integer("batch", 1, kMaxDim);
  if (step.has("weight_decay")) out.weight_decay = step.number("weight_decay", 0, 1);
  const TorchStepField summary = top.record("summary");
  out.parameters = static_cast<uint64_t>(summary.integer("parameters", 0));
  out.saved_for_backward_bytes = static_cast<uint64_t>(summary.integer("saved_for_backward_bytes", 0));
  out.peak_live_bytes = static_cast<uint64_t>(summary.integer("peak_live_bytes", 0));
  const Json& blocks = top.array("blocks");
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (!blocks[i].is_string()) top.fail("blocks[" + std::to_string(i) + "]", "expected a module path (a string)");
    out.blocks.push_back(blocks[i].get<std::string>());
  }
}

void read_storages(const TorchStepField& top, TorchStepFile& out, int64_t ops) {
  const Json& arr = top.array("storages");
  out.storages.reserve(arr.size());
  for (size_t i = 0; i < arr.size(); ++i) {
    const TorchStepField f = top.element(arr, "storages", i);
    TorchStepStorage s;
    s.id = f.integer("id");
    if (s.id != static_cast<int64_t>(i)) f.fail("id", "storage " + std::to_string(i) + " has id " + std::to_string(s.id));
    s.bytes = static_cast<uint64_t>(f.integer("bytes", 0, static_cast<int64_t>(kMaxTensorBytes)));
    s.kind = f.text("kind");
    static const char* kKinds[] = {"parameter", "buffer", "gradient", "optimizer_state", "input", "constant", "activation"};
    if (std::find(std::begin(kKinds), std::end(kKinds), s.kind) == std::end(kKinds))
      f.fail("kind", "unknown storage kind '" + s.kind + "'; valid: parameter, buffer, gradient, optimizer_state, input, "
                     "constant, activation");
    s.name = f.string_or("name", "");
    s.allocated_at = f.optional_integer("allocated_at", 0, ops);
    s.freed_at = f.optional_integer("freed_at", 0, ops);
    s.grad_of = f.optional_integer("grad_of", 0, std::numeric_limits<int64_t>::max());
    s.host = f.flag("host");
    out.storages.push_back(std::move(s));
  }
  for (size_t i = 0; i < out.storages.size(); ++i)
    if (out.storages[i].grad_of)
      check_storage_ref(top.element(arr, "storages", i), "grad_of", *out.storages[i].grad_of, out.storages.size());
}

void read_ops(const TorchStepField& top, TorchStepFile& out) {
  const Json& arr = top.array("ops");
  out.ops.reserve(arr.size());
  for (size_t i = 0; i < arr.size(); ++i) {
    const TorchStepField f = top.element(arr, "ops", i);
    TorchStepOp op;
    op.id = f.integer("id");
    if (op.id != static_cast<int64_t>(i)) f.fail("id", "op " + std::to_string(i) + " has id " + std::to_string(op.id));
    op.name = f.text("name");
    op.phase = f.text("phase");
    if (op.phase != "forward" && op.phase != "backward" && op.phase != "optimizer")
      f.fail("phase", "unknown phase '" + op.phase + "'; valid: forward, backward, optimizer");
    op.module = f.string_or("module", "");
    op.block = f.has("block") ? f.integer("block", 0, static_cast<int64_t>(out.blocks.size()) - 1) : -1;
    op.inplace = f.flag("inplace");
    op.view = f.flag("view");
    op.recompute = f.flag("recompute");
    for (const bool input : {true, false}) {
      const std::string field = input ? "inputs" : "outputs";
      const Json& views = f.array(field);
      for (size_t k = 0; k < views.size(); ++k) {
        const TorchStepField vf = f.element(views, field, k);
        TorchStepView v = read_view(vf, input);
        check_storage_ref(vf, "storage", v.storage, out.storages.size());
        (input ? op.inputs : op.outputs).push_back(std::move(v));
      }
    }
    op.args = read_args(f);
    out.ops.push_back(std::move(op));
  }
}

void read_saved(const TorchStepField& top, TorchStepFile& out) {
  const Json& arr = top.array("saved");
  const int64_t last_op = static_cast<int64_t>(out.ops.size()) - 1;
  for (size_t i = 0; i < arr.size(); ++i) {
    const TorchStepField f = top.element(arr, "saved", i);
    TorchStepSaved s;
    s.storage = f.integer("storage");
    check_storage_ref(f, "storage", s.storage, out.storages.size());
    s.saved_by = f.optional_integer("saved_by", 0, last_op);
    s.used_by = f.optional_integer("used_by", 0, last_op);
    out.saved.push_back(s);
  }
}

}  // namespace

TorchStepFile parse_torch_step(const std::string& text, const std::string& name, int64_t max_ops) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {  // parse_error (a truncated file ends early), out_of_range for a huge number
    throw ConfigError(name, 0, "", std::string("not a trace file (invalid JSON; a truncated file ends early): ") + e.what());
  }
  TorchStepField top(j, name, "");
  TorchStepFile out;
  out.file = name;
  read_header(top, out);
  const Json& ops = top.array("ops");
  if (max_ops > 0 && static_cast<int64_t>(ops.size()) > max_ops)
    top.fail("ops", std::to_string(ops.size()) + " ops, above max_graph_nodes " + std::to_string(max_ops));
  read_storages(top, out, static_cast<int64_t>(ops.size()));
  read_ops(top, out);
  read_saved(top, out);
  return out;
}

TorchStepFile read_torch_step(const std::string& path, int64_t max_ops) {
  return parse_torch_step(read_input_file(path, "model"), path, max_ops);
}

}  // namespace dlsim
