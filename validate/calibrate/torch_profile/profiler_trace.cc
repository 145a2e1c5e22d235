#include "validate/calibrate/torch_profile/profiler_trace.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "common/config_error.h"
#include "common/json_fields.h"
#include "common/input_file.h"

namespace dlsim {
namespace {

using json = nlohmann::json;

// A trace's times are microseconds since the epoch (1.7e15 today) or since the process started; a duration above
// a day is no training step's, and a time outside +-1e18 us is not a clock reading.
constexpr double kMaxProfileDurUs = 86400e6;
constexpr double kMaxProfileTsUs = 1e18;
constexpr int64_t kMaxProfileDim = int64_t{1} << 48;

// One event's fields (common/json_fields.h), with the trace's own: times in microseconds, thread ids, the args
// the profiler writes with record_shapes.
class ProfileEventReader : public JsonFields {
 public:
  ProfileEventReader(const json& j, const std::string& file, size_t index)
      : JsonFields(j, file, "traceEvents[" + std::to_string(index) + "]") {}

  double number(const std::string& f, double least, double most) const {
    return JsonFields::number(f, least, most, false, "microseconds");
  }
  std::string thread(const std::string& f) const {
    const json& v = at(f);
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer()) return v.dump();
    fail(f, "must be a thread id (an integer or a string), got " + v.dump());
  }
  const json& args() const {
    const json& a = at("args");
    if (!a.is_object()) fail("args", "must be an object, got " + a.dump());
    return a;
  }
  std::optional<int64_t> arg_int(const std::string& f, bool required) const {
    const json& a = args();
    if (!a.contains(f)) {
      if (required) fail("args." + f, "missing");
      return std::nullopt;
    }
    const json& v = a.at(f);
    if (!v.is_number_integer()) fail("args." + f, "must be an integer, got " + v.dump());
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      fail("args." + f, "is out of range: " + v.dump());
    return v.get<int64_t>();
  }
  std::vector<int64_t> dims(const json& v, const std::string& field) const {
    std::vector<int64_t> out;
    for (const json& d : v) {
      if (!d.is_number_integer()) fail(field, "a dimension must be an integer, got " + d.dump());
      if (d.is_number_unsigned() && d.get<uint64_t>() > static_cast<uint64_t>(kMaxProfileDim))
        fail(field, "a dimension is out of range: " + d.dump());
      const int64_t x = d.get<int64_t>();
      if (x < 0 || x > kMaxProfileDim) fail(field, "a dimension must be in [0, 2^48], got " + d.dump());
      out.push_back(x);
    }
    return out;
  }
  // "Input Dims": one entry per argument: [] (no tensor), [d0, d1, ...] (a tensor; a 0-d tensor is [] too), or
  // [[...], [...]] (a list of tensors).
  std::vector<ProfileInput> input_dims() const {
    const json& a = args();
    const json& v = a.at("Input Dims");
    const std::string field = "args.Input Dims";
    if (!v.is_array()) fail(field, "must be a list (one entry per argument), got " + v.dump());
    std::vector<ProfileInput> out;
    for (size_t i = 0; i < v.size(); ++i) {
      const json& e = v[i];
      const std::string f = field + "[" + std::to_string(i) + "]";
      if (!e.is_array()) fail(f, "must be a list of dimensions, got " + e.dump());
      ProfileInput in;
      if (!e.empty() && e.front().is_array()) {
        for (const json& t : e) {
          if (!t.is_array()) fail(f, "a tensor list's entries must all be lists, got " + t.dump());
          in.list.push_back(dims(t, f));
        }
      } else {
        in.shape = dims(e, f);
      }
      out.push_back(std::move(in));
    }
    return out;
  }
};

std::optional<ProfileEventKind> profile_kind_of(const std::string& cat) {
  if (cat == "cpu_op") return ProfileEventKind::CpuOp;
  if (cat == "user_annotation") return ProfileEventKind::Annotation;
  if (cat == "cuda_runtime" || cat == "cuda_driver") return ProfileEventKind::Runtime;
  if (cat == "kernel") return ProfileEventKind::Kernel;
  if (cat == "gpu_memcpy" || cat == "gpu_memset") return ProfileEventKind::Memcpy;
  return std::nullopt;
}

void read_profile_meta(const json& doc, ProfilerTrace& t) {
  if (!doc.contains("dlsim")) return;
  const json& m = doc.at("dlsim");
  if (!m.is_object()) throw ConfigError(t.file, 0, "dlsim", "must be an object (record_profile.py writes it)");
  if (!m.contains("unprofiled_step_us")) throw ConfigError(t.file, 0, "dlsim.unprofiled_step_us", "missing");
  const json& v = m.at("unprofiled_step_us");
  if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() <= kMaxProfileDurUs))
    throw ConfigError(t.file, 0, "dlsim.unprofiled_step_us", "must be a time in (0, 8.64e10] us, got " + v.dump());
  t.unprofiled_step_us = v.get<double>();
  for (const char* k : {"spec", "batch", "device", "torch"})
    if (m.contains(k)) t.recorded += (t.recorded.empty() ? "" : ", ") + std::string(k) + " " +
                                     (m.at(k).is_string() ? m.at(k).get<std::string>() : m.at(k).dump());
}

}  // namespace

ProfilerTrace profiler_trace_from_text(const std::string& text, const std::string& file) {
  ProfilerTrace t;
  t.file = file;
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number that overflows (1e999)
    throw ConfigError(file, 0, "", std::string("not a profiler trace: not JSON (") + e.what() + ")");
  }
  // Chrome's two forms: an object with traceEvents (Kineto, PyTorch 2.x), or the list of events alone (its JSON
  // Array Format, which PyTorch 1.x's profiler writes).
  if (!doc.is_array() && (!doc.is_object() || !doc.contains("traceEvents")))
    throw ConfigError(file, 0, "traceEvents",
                      "missing: not a torch.profiler trace (prof.export_chrome_trace writes an object with "
                      "traceEvents)");
  const json& events = doc.is_array() ? doc : doc.at("traceEvents");
  if (!events.is_array()) throw ConfigError(file, 0, "traceEvents", "must be a list of events");
  if (doc.is_object()) read_profile_meta(doc, t);
  size_t cpu_ops = 0, with_dims = 0, uncategorised = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    ProfileEventReader r(e, file, i);
    if (!e.is_object()) r.fail("", "must be an object, got " + e.dump());
    if (r.text("ph") != "X") continue;  // flows, instants, metadata
    if (!e.contains("cat")) {  // Kineto's own spans without a category; or a profiler without Kineto
      ++uncategorised;
      continue;
    }
    const auto kind = profile_kind_of(r.text("cat"));
    if (!kind) continue;
    ProfileEvent ev;
    ev.kind = *kind;
    ev.index = i;
    ev.name = r.text("name");
    ev.ts_us = r.number("ts", -kMaxProfileTsUs, kMaxProfileTsUs);
    ev.dur_us = r.number("dur", 0, kMaxProfileDurUs);
    ev.tid = r.thread("tid");
    switch (ev.kind) {
      case ProfileEventKind::CpuOp:
        ++cpu_ops;
        r.args();
        if (e.at("args").contains("Input Dims")) {
          ++with_dims;
          ev.inputs = r.input_dims();
        }
        ev.sequence = r.arg_int("Sequence number", false);
        ev.forward_thread = r.arg_int("Fwd thread id", false);
        ev.external_id = r.arg_int("External id", false);
        break;
      case ProfileEventKind::Annotation: break;
      case ProfileEventKind::Runtime:  // a call that issues GPU work must say which (the others may not)
        ev.correlation = r.arg_int("correlation", ev.name.find("Launch") != std::string::npos ||
                                                      ev.name.find("Memcpy") != std::string::npos ||
                                                      ev.name.find("Memset") != std::string::npos);
        ev.external_id = r.arg_int("External id", false);
        break;
      case ProfileEventKind::Kernel:
      case ProfileEventKind::Memcpy:
        ev.correlation = r.arg_int("correlation", true);
        ev.external_id = r.arg_int("External id", false);
        break;
    }
    t.events.push_back(std::move(ev));
  }
  if (cpu_ops == 0)
    throw ConfigError(file, 0, "traceEvents",
                      uncategorised > 0
                          ? "holds no cpu_op events, only events without a category: the trace of a PyTorch built "
                            "without Kineto (its legacy profiler records no shapes); record with PyTorch 2.x"
                          : "holds no cpu_op events: not a torch.profiler trace of the host (profile with "
                            "ProfilerActivity.CPU)");
  if (with_dims == 0)
    throw ConfigError(file, 0, "traceEvents",
                      "no cpu_op event has args.Input Dims: the trace was recorded without shapes "
                      "(torch.profiler.profile(record_shapes=True))");
  return t;
}

ProfilerTrace load_profiler_trace(const std::string& path) {
  return profiler_trace_from_text(read_input_file(path), path);  // a folder or an unreadable file: path and reason
}

}  // namespace dlsim
