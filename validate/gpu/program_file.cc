#include "validate/gpu/program_file.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/config_error.h"
#include "common/input_file.h"

namespace dlsim {

using nlohmann::json;

namespace {

// Enums travel by name (to_string), so a plan file stays readable and survives reordering of an enum.
template <class E>
E enum_from(const std::string& s, E last, const std::string& file, const std::string& where) {
  for (int i = 0; i <= static_cast<int>(last); ++i)
    if (s == to_string(static_cast<E>(i))) return static_cast<E>(i);
  throw ConfigError(file, 0, where, "unknown value '" + s + "'");
}

const json& field(const json& j, const char* key, const std::string& file, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw ConfigError(file, 0, where + "." + key, "missing field");
  return j.at(key);
}
template <class T>
T get(const json& j, const char* key, const std::string& file, const std::string& where) {
  const json& v = field(j, key, file, where);
  try {
    return v.get<T>();
  } catch (const json::exception& e) {
    throw ConfigError(file, 0, where + "." + key, std::string("wrong type: ") + e.what());
  }
}

json commands_to_json(const std::vector<Command>& cmds) {
  json a = json::array();
  for (const Command& c : cmds)
    a.push_back({{"kind", to_string(c.kind)}, {"stream", c.stream}, {"op", c.op}, {"tensor", c.tensor},
                 {"event", c.event}});
  return a;
}

std::vector<Command> commands_from_json(const json& a, const std::string& file, const std::string& where) {
  if (!a.is_array()) throw ConfigError(file, 0, where, "expected an array of commands");
  std::vector<Command> v;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string w = where + "[" + std::to_string(i) + "]";
    Command c;
    c.kind = enum_from(get<std::string>(a[i], "kind", file, w), CmdKind::HostCompute, file, w + ".kind");
    c.stream = get<int16_t>(a[i], "stream", file, w);
    c.op = get<OpId>(a[i], "op", file, w);
    c.tensor = get<TensorId>(a[i], "tensor", file, w);
    c.event = get<int32_t>(a[i], "event", file, w);
    v.push_back(c);
  }
  return v;
}

json param_to_json(const ParamValue& v) {
  return std::visit([](const auto& x) { return json(x); }, v);
}

ParamValue param_from_json(const json& j, const std::string& file, const std::string& where) {
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_number_float()) return j.get<double>();
  if (j.is_string()) return j.get<std::string>();
  throw ConfigError(file, 0, where, "a parameter must be a number, a boolean or a string");
}

// An op's attributes as program_file_to_json writes them (Op::written_attributes): each a name that
// workloads/op_attributes.h declares for the op's kind, or the name of its Other sub-kind with the value 1. Every
// file dlsim wrote since the plan format began reads so, as the builders never set any other attribute; a name the
// op's kind does not declare is an error naming it.
void read_attributes(const json& attrs, Op& o, const std::string& file, const std::string& where) {
  if (!attrs.is_object()) throw ConfigError(file, 0, where, "expected an object");
  for (const auto& [k, v] : attrs.items()) {  // the sub-kind first: it decides which attributes are declared
    if (!v.is_number_integer()) throw ConfigError(file, 0, where + "." + k, "expected an integer");
    const std::optional<OtherOp> other = other_op_named(k);
    if (!other) continue;
    if (v.get<int64_t>() != 1 || o.other != OtherOp::None || !may_carry(o.kind, *other))
      throw ConfigError(file, 0, where + "." + k,
                        std::string("a sub-kind is 1, once, on an Other op (or the gradient accumulation that follows "
                                    "one); this op is ") + to_string(o.kind));
    o.other = *other;
  }
  for (const auto& [k, v] : attrs.items()) {
    if (other_op_named(k)) continue;
    const std::optional<AttrName> name = attr_named(k);
    if (!name || !find_declaration(o.kind, o.other, name->attr)) {
      const std::string kind =
          std::string(to_string(o.kind)) + (o.other == OtherOp::None ? "" : std::string("/") + to_string(o.other));
      throw ConfigError(file, 0, where + "." + k,
                        "not an attribute of " + kind + " ops (workloads/op_attributes.cc declares each kind's)");
    }
    if (name->index) o.set_attr(name->attr, *name->index, v.get<int64_t>());
    else o.set_attr(name->attr, v.get<int64_t>());
  }
}

}  // namespace

json program_file_to_json(const ProgramFile& p) {
  // The plan format has no replay inputs yet: a replay there would read the forward's (freed) gathered copy.
  if (!p.graph.replay_source.empty())
    for (const Command& c : p.program.iteration)
      if (c.replay)
        throw std::invalid_argument("plan file: a recomputation that reads FSDP's regathered parameters "
                                    "(Graph::replay_source) cannot be written for the GPU harness yet");
  json tensors = json::array();
  for (const Tensor& t : p.graph.tensors()) {
    tensors.push_back({{"id", t.id}, {"name", t.name}, {"kind", to_string(t.kind)}, {"dtype", to_string(t.dtype)},
                       {"shape", t.shape}, {"bytes", t.bytes}, {"persistent", t.persistent}});
    if (t.grad_of != kNoTensor) tensors.back()["grad_of"] = t.grad_of;
  }
  json ops = json::array();
  for (const Op& o : p.graph.ops()) {
    json attrs = json::object();
    // by stored name in name order, an Other op's sub-kind as `<sub-kind>: 1` (workloads/op_kind.h)
    for (const auto& [k, v] : o.written_attributes()) attrs[k] = v;
    ops.push_back({{"id", o.id}, {"name", o.name}, {"kind", to_string(o.kind)}, {"phase", to_string(o.phase)},
                   {"inputs", o.inputs}, {"outputs", o.outputs}, {"workspace", o.workspace}, {"flops", o.flops},
                   {"bytes_read", o.bytes_read}, {"bytes_written", o.bytes_written}, {"attrs", attrs},
                   {"forward_op", o.forward_op}});
  }
  json params = json::object();
  for (const auto& [k, v] : p.pool_params.values()) params[k] = param_to_json(v);
  return {{"format", "dlsim-plan-1"},
          {"experiment", p.experiment},
          {"hw", p.hw},
          {"capacity_bytes", p.capacity_bytes},
          {"total_global_mem_bytes", p.total_global_mem_bytes},
          {"pool", {{"name", p.pool}, {"params", params}}},
          {"warmup", p.warmup},
          {"iterations", p.iterations},
          {"graph", {{"name", p.graph.name}, {"batch", p.graph.batch}, {"tensors", tensors}, {"ops", ops}}},
          {"program",
           {{"num_streams", p.program.num_streams}, {"num_compute_streams", p.program.num_compute_streams},
            {"num_host_streams", p.program.num_host_streams}, {"delayed_host_update", p.program.delayed_host_update},
            {"host_rate_scale", p.program.host_rate_scale},
            {"num_events", p.program.num_events}, {"setup", commands_to_json(p.program.setup)},
            {"iteration", commands_to_json(p.program.iteration)},
            {"teardown", commands_to_json(p.program.teardown)}}}};
}

std::string program_fingerprint(const ProgramFile& p) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
  auto add = [&h](const std::string& field) {
    for (const unsigned char c : field + '\0') {  // a terminator: ("ab", "c") and ("a", "bc") differ
      h ^= c;
      h *= 0x100000001b3ULL;
    }
  };
  add(p.graph.name);
  add(std::to_string(p.graph.batch));
  for (const Op& o : p.graph.ops()) {
    add(o.name);
    add(to_string(o.kind));
  }
  for (const Command& c : p.program.iteration)
    if (c.kind == CmdKind::Launch || c.kind == CmdKind::HostCompute)
      add(std::string(to_string(c.kind)) + " " + std::to_string(c.op) + " " + std::to_string(c.stream));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

ProgramFile program_file_from_json(const json& j, const std::string& file) {
  if (get<std::string>(j, "format", file, "plan") != "dlsim-plan-1")
    throw ConfigError(file, 0, "plan.format", "expected 'dlsim-plan-1'");
  ProgramFile p;
  p.experiment = get<std::string>(j, "experiment", file, "plan");
  p.hw = get<std::string>(j, "hw", file, "plan");
  p.capacity_bytes = get<uint64_t>(j, "capacity_bytes", file, "plan");
  p.total_global_mem_bytes =
      j.contains("total_global_mem_bytes") ? get<uint64_t>(j, "total_global_mem_bytes", file, "plan") : p.capacity_bytes;
  if (p.total_global_mem_bytes < p.capacity_bytes)
    throw ConfigError(file, 0, "plan.total_global_mem_bytes", "must not be below capacity_bytes");
  const json& pool = field(j, "pool", file, "plan");
  p.pool = get<std::string>(pool, "name", file, "plan.pool");
  const json& params = field(pool, "params", file, "plan.pool");
  if (!params.is_object()) throw ConfigError(file, 0, "plan.pool.params", "expected an object");
  for (const auto& [k, v] : params.items()) p.pool_params.set(k, param_from_json(v, file, "plan.pool.params." + k));
  p.warmup = get<int>(j, "warmup", file, "plan");
  p.iterations = get<int>(j, "iterations", file, "plan");
  if (p.warmup < 0 || p.iterations < 1) throw ConfigError(file, 0, "plan.iterations", "need warmup >= 0, iterations >= 1");

  const json& g = field(j, "graph", file, "plan");
  p.graph.name = get<std::string>(g, "name", file, "plan.graph");
  p.graph.batch = get<int64_t>(g, "batch", file, "plan.graph");
  const json& tensors = field(g, "tensors", file, "plan.graph");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string w = "plan.graph.tensors[" + std::to_string(i) + "]";
    const json& tj = tensors[i];
    Tensor t;
    t.name = get<std::string>(tj, "name", file, w);
    t.kind = enum_from(get<std::string>(tj, "kind", file, w), TensorKind::Input, file, w + ".kind");
    t.dtype = enum_from(get<std::string>(tj, "dtype", file, w), DType::Bool, file, w + ".dtype");
    t.shape = get<std::vector<int64_t>>(tj, "shape", file, w);
    t.bytes = get<uint64_t>(tj, "bytes", file, w);
    t.persistent = get<bool>(tj, "persistent", file, w);
    if (tj.contains("grad_of")) {  // absent in plans written before it existed, and for non-gradients
      t.grad_of = get<TensorId>(tj, "grad_of", file, w);
      if (t.grad_of < 0 || t.grad_of >= static_cast<TensorId>(tensors.size()))
        throw ConfigError(file, 0, w + ".grad_of", "not a tensor id: " + std::to_string(t.grad_of));
    }
    if (get<TensorId>(tj, "id", file, w) != static_cast<TensorId>(i))
      throw ConfigError(file, 0, w + ".id", "tensor ids must be 0, 1, 2... in order");
    p.graph.add_tensor(std::move(t));
  }
  const auto n_tensors = static_cast<TensorId>(p.graph.tensors().size());
  const json& ops = field(g, "ops", file, "plan.graph");
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string w = "plan.graph.ops[" + std::to_string(i) + "]";
    const json& oj = ops[i];
    Op o;
    o.name = get<std::string>(oj, "name", file, w);
    o.kind = enum_from(get<std::string>(oj, "kind", file, w), OpKind::Other, file, w + ".kind");
    o.phase = enum_from(get<std::string>(oj, "phase", file, w), Phase::Optimizer, file, w + ".phase");
    o.inputs = get<std::vector<TensorId>>(oj, "inputs", file, w);
    o.outputs = get<std::vector<TensorId>>(oj, "outputs", file, w);
    o.workspace = get<TensorId>(oj, "workspace", file, w);
    for (TensorId t : o.inputs)
      if (t < 0 || t >= n_tensors) throw ConfigError(file, 0, w + ".inputs", "tensor id out of range");
    for (TensorId t : o.outputs)
      if (t < 0 || t >= n_tensors) throw ConfigError(file, 0, w + ".outputs", "tensor id out of range");
    if (o.workspace != kNoTensor && (o.workspace < 0 || o.workspace >= n_tensors))
      throw ConfigError(file, 0, w + ".workspace", "tensor id out of range");
    o.flops = get<double>(oj, "flops", file, w);
    o.bytes_read = get<uint64_t>(oj, "bytes_read", file, w);
    o.bytes_written = get<uint64_t>(oj, "bytes_written", file, w);
    read_attributes(field(oj, "attrs", file, w), o, file, w + ".attrs");
    o.forward_op = get<OpId>(oj, "forward_op", file, w);
    if (get<OpId>(oj, "id", file, w) != static_cast<OpId>(i))
      throw ConfigError(file, 0, w + ".id", "op ids must be 0, 1, 2... in order");
    p.graph.add_op(std::move(o));
  }

  const json& pr = field(j, "program", file, "plan");
  p.program.num_streams = get<int>(pr, "num_streams", file, "plan.program");
  p.program.num_compute_streams = get<int>(pr, "num_compute_streams", file, "plan.program");
  p.program.num_events = get<int>(pr, "num_events", file, "plan.program");
  // Plans written before the host step have neither key: no host streams.
  if (pr.contains("num_host_streams")) p.program.num_host_streams = get<int>(pr, "num_host_streams", file, "plan.program");
  if (pr.contains("delayed_host_update"))
    p.program.delayed_host_update = get<bool>(pr, "delayed_host_update", file, "plan.program");
  if (pr.contains("host_rate_scale")) p.program.host_rate_scale = get<double>(pr, "host_rate_scale", file, "plan.program");
  if (!(p.program.host_rate_scale > 0 && p.program.host_rate_scale < 1e6))
    throw ConfigError(file, 0, "plan.program.host_rate_scale", "must be in (0, 1e6)");
  if (p.program.num_host_streams < 0 || p.program.num_host_streams >= std::max(p.program.num_streams, 1))
    throw ConfigError(file, 0, "plan.program.num_host_streams", "must be in [0, num_streams - 1]");
  p.program.setup = commands_from_json(field(pr, "setup", file, "plan.program"), file, "plan.program.setup");
  p.program.iteration = commands_from_json(field(pr, "iteration", file, "plan.program"), file, "plan.program.iteration");
  p.program.teardown = commands_from_json(field(pr, "teardown", file, "plan.program"), file, "plan.program.teardown");
  const auto n_ops = static_cast<OpId>(p.graph.ops().size());
  for (const auto* list : {&p.program.setup, &p.program.iteration, &p.program.teardown})
    for (const Command& c : *list) {
      if (c.stream < 0 || c.stream >= p.program.num_streams)
        throw ConfigError(file, 0, "plan.program", "command on stream " + std::to_string(c.stream) + " out of range");
      if ((c.kind == CmdKind::Launch || c.kind == CmdKind::HostCompute) && (c.op < 0 || c.op >= n_ops))
        throw ConfigError(file, 0, "plan.program", "launch of op " + std::to_string(c.op) + " out of range");
      if ((c.kind == CmdKind::Alloc || c.kind == CmdKind::Free || c.kind == CmdKind::CopyIn ||
           c.kind == CmdKind::CopyOut || c.kind == CmdKind::RecordStream) && (c.tensor < 0 || c.tensor >= n_tensors))
        throw ConfigError(file, 0, "plan.program", "command on tensor " + std::to_string(c.tensor) + " out of range");
      if ((c.kind == CmdKind::RecordEvent || c.kind == CmdKind::WaitEvent || c.kind == CmdKind::SyncEvent) &&
          (c.event < 0 || c.event >= p.program.num_events))
        throw ConfigError(file, 0, "plan.program", "event " + std::to_string(c.event) + " out of range");
    }
  return p;
}

void write_program_file(const ProgramFile& p, const std::string& path) {
  write_file_atomically(path, program_file_to_json(p).dump(1) + "\n");
}

ProgramFile read_program_file(const std::string& path) {
  return program_file_from_text(read_input_file(path), path);
}

ProgramFile program_file_from_text(const std::string& text, const std::string& file) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number that overflows (1e999)
    throw ConfigError(file, 0, "", std::string("not valid JSON: ") + e.what());
  }
  return program_file_from_json(j, file);
}

}  // namespace dlsim
