#include "validate/calibrate/kernel_fit/kernel_sweep.h"

#include <cmath>
#include <optional>
#include <set>

#include "common/config_error.h"
#include "common/json_fields.h"
#include "common/input_file.h"
#include "common/strings.h"

namespace dlsim {
namespace {

using json = nlohmann::json;

constexpr SweepOp kSweepOps[] = {SweepOp::ConvFwd, SweepOp::ConvDgrad, SweepOp::ConvWgrad, SweepOp::Gemm,
                                 SweepOp::Bmm,     SweepOp::SdpaFwd,   SweepOp::SdpaFwdBwd, SweepOp::Add,
                                 SweepOp::Relu,    SweepOp::Copy,      SweepOp::Softmax,    SweepOp::LayerNorm,
                                 SweepOp::BatchNormFwd};
// Sizes up to 2^31 (a tensor dimension PyTorch indexes with 32-bit math past that is no sweep's business).
constexpr int64_t kMaxSweepSize = int64_t{1} << 31;
constexpr int64_t kMaxSweepBytes = int64_t{1} << 50;
constexpr double kMaxSweepUs = 1e9;  // a kernel of over a quarter of an hour is a unit mistake

// One record's fields (common/json_fields.h), with the sweep's own rules: sizes, times in microseconds, the unknown
// fields named by the record's op, and no control characters in a name.
class SweepRecordReader : public JsonFields {
 public:
  SweepRecordReader(const json& j, const std::string& file, size_t index)
      : JsonFields(j, file, "records[" + std::to_string(index) + "]") {}

  void allow_only(const std::vector<std::string>& allowed) const {
    JsonFields::allow_only(allowed, "for op '" + value().at("op").get<std::string>() + "'");
  }
  std::string text(const std::string& f) const {
    const std::string s = JsonFields::text(f);
    for (unsigned char ch : s)
      if (ch < 0x20 || ch == 0x7f) fail(f, "holds a control character");
    return s;
  }
  int64_t size(const std::string& f, int64_t least = 1, int64_t most = kMaxSweepSize) const {
    return integer(f, least, most);
  }
  double time_us(const std::string& f) const { return number(f, 0, kMaxSweepUs, true, "us"); }
};

std::optional<SweepOp> sweep_op_named(const std::string& s) {
  for (SweepOp op : kSweepOps)
    if (s == to_string(op)) return op;
  return std::nullopt;
}

std::string sweep_op_names() {
  std::vector<std::string> v;
  for (SweepOp op : kSweepOps) v.push_back(to_string(op));
  return join(v);
}

void check_sweep_choice(const SweepRecordReader& r, const std::string& field, const std::string& value,
                 const std::vector<std::string>& valid) {
  for (const std::string& v : valid)
    if (v == value) return;
  r.fail(field, "'" + value + "' is not one of " + join(valid));
}

void read_conv(const SweepRecordReader& r, SweepRecord& s) {
  r.allow_only({"op", "dtype", "us", "us_min", "src", "flops", "n", "c", "h", "w", "k", "r", "s", "stride", "pad",
                "groups", "stride_w", "pad_w", "dilation", "layout", "tf32"});
  ConvSizes& z = s.conv;
  z.n = r.size("n");
  z.c = r.size("c");
  z.h = r.size("h");
  z.w = r.size("w");
  z.k = r.size("k");
  z.r = r.size("r");
  z.s = r.size("s");
  z.stride_h = z.stride_w = r.size("stride");
  z.pad_h = z.pad_w = r.size("pad", 0);
  if (r.has("stride_w")) z.stride_w = r.size("stride_w");
  if (r.has("pad_w")) z.pad_w = r.size("pad_w", 0);
  if (r.has("dilation")) z.dilation = r.size("dilation");
  z.groups = r.size("groups");
  if (z.c % z.groups != 0 || z.k % z.groups != 0)
    r.fail("groups", "must divide c (" + std::to_string(z.c) + ") and k (" + std::to_string(z.k) + "), got " +
                         std::to_string(z.groups));
  if (z.out_h() < 1 || z.out_w() < 1) r.fail("r", "the filter does not fit the padded input: no output");
  check_sweep_choice(r, "dtype", s.dtype, {"float32", "float16", "bfloat16"});
  s.layout = s.dtype == "float32" ? "nchw" : "nhwc";
  if (r.has("layout")) {
    s.layout = r.text("layout");
    check_sweep_choice(r, "layout", s.layout, {"nchw", "nhwc"});
  }
  z.channels_last = s.layout == "nhwc";  // where PyTorch runs a depthwise convolution (hw/fitted/conv_backend.h)
  if (r.has("tf32")) {
    s.tf32 = r.flag("tf32");
    if (s.dtype != "float32") r.fail("tf32", "goes with dtype float32 only");
  }
}

void read_gemm(const SweepRecordReader& r, SweepRecord& s) {
  if (s.op == SweepOp::Bmm) {
    r.allow_only({"op", "dtype", "us", "us_min", "src", "flops", "batch", "m", "n", "k"});
    s.batch = r.size("batch");
  } else {
    r.allow_only({"op", "dtype", "us", "us_min", "src", "flops", "m", "n", "k"});
  }
  s.m = r.size("m");
  s.n = r.size("n");
  s.k = r.size("k");
  check_sweep_choice(r, "dtype", s.dtype, {"fp32", "tf32", "bf16", "fp16"});
}

void read_sdpa(const SweepRecordReader& r, SweepRecord& s) {
  r.allow_only({"op", "dtype", "us", "us_min", "src", "flops", "b", "heads", "seq", "d", "causal"});
  s.b = r.size("b");
  s.heads = r.size("heads");
  s.seq = r.size("seq");
  s.d = r.size("d");
  s.causal = r.flag("causal");
  // float32: PyTorch's memory-efficient kernels (hw/fitted/op_kernel_shapes.h, sdpa_path); 16-bit: flash.
  check_sweep_choice(r, "dtype", s.dtype, {"bfloat16", "float16", "float32"});
}

void read_memory_op(const SweepRecordReader& r, SweepRecord& s) {
  if (s.op == SweepOp::BatchNormFwd) {
    r.allow_only({"op", "dtype", "us", "us_min", "src", "flops", "numel", "bytes", "c"});
    s.channels = r.size("c");
  } else {
    r.allow_only({"op", "dtype", "us", "us_min", "src", "flops", "numel", "bytes"});
  }
  s.numel = r.size("numel");
  s.bytes = r.size("bytes", 1, kMaxSweepBytes);
  check_sweep_choice(r, "dtype", s.dtype, {"float32", "bfloat16", "float16"});
}

SweepRecord read_sweep_record(const json& j, const std::string& file, size_t index) {
  SweepRecordReader r(j, file, index);
  r.require_object();
  SweepRecord s;
  s.index = index;
  const std::string op = r.text("op");
  const auto parsed = sweep_op_named(op);
  if (!parsed) r.fail("op", "unknown op '" + op + "'; valid: " + sweep_op_names());
  s.op = *parsed;
  s.dtype = r.text("dtype");
  s.us = r.time_us("us");
  if (r.has("us_min")) {
    s.us_min = r.time_us("us_min");
    if (s.us_min > s.us) r.fail("us_min", "the least time is above the median (us)");
  }
  if (r.has("src")) s.src = r.text("src");
  if (r.has("flops")) {
    const json& f = r.at("flops");
    if (!f.is_number() || !(f.get<double>() >= 0) || !std::isfinite(f.get<double>()))
      r.fail("flops", "must be a non-negative number, got " + f.dump());
  }
  if (is_conv(s.op)) read_conv(r, s);
  else if (s.op == SweepOp::Gemm || s.op == SweepOp::Bmm) read_gemm(r, s);
  else if (s.op == SweepOp::SdpaFwd || s.op == SweepOp::SdpaFwdBwd) read_sdpa(r, s);
  else read_memory_op(r, s);
  return s;
}

}  // namespace

const char* to_string(SweepOp op) {
  switch (op) {
    case SweepOp::ConvFwd: return "conv_fwd";
    case SweepOp::ConvDgrad: return "conv_dgrad";
    case SweepOp::ConvWgrad: return "conv_wgrad";
    case SweepOp::Gemm: return "gemm";
    case SweepOp::Bmm: return "bmm";
    case SweepOp::SdpaFwd: return "sdpa_fwd";
    case SweepOp::SdpaFwdBwd: return "sdpa_fwd_bwd";
    case SweepOp::Add: return "add";
    case SweepOp::Relu: return "relu";
    case SweepOp::Copy: return "copy";
    case SweepOp::Softmax: return "softmax";
    case SweepOp::LayerNorm: return "layernorm";
    case SweepOp::BatchNormFwd: return "batchnorm_fwd";
  }
  return "?";
}

bool is_conv(SweepOp op) { return op == SweepOp::ConvFwd || op == SweepOp::ConvDgrad || op == SweepOp::ConvWgrad; }

bool is_memory_bound(SweepOp op) {
  return op == SweepOp::Add || op == SweepOp::Relu || op == SweepOp::Copy || op == SweepOp::Softmax ||
         op == SweepOp::LayerNorm || op == SweepOp::BatchNormFwd;
}

KernelSweep kernel_sweep_from_text(const std::string& text, const std::string& file) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw ConfigError(file, 0, "", std::string("not a JSON kernel sweep: ") + e.what());
  }
  if (!doc.is_object()) throw ConfigError(file, 0, "", "expected an object {\"meta\": {...}, \"records\": [...]}");
  for (const auto& [k, v] : doc.items())
    if (k != "meta" && k != "records" && k != "seconds")
      throw ConfigError(file, 0, k, "unknown field; valid: meta, records, seconds");
  if (doc.contains("seconds") && !(doc["seconds"].is_number() && doc["seconds"].get<double>() >= 0))
    throw ConfigError(file, 0, "seconds", "must be the sweep's duration in seconds, a non-negative number");
  KernelSweep s;
  s.file = file;
  if (doc.contains("meta")) {
    if (!doc["meta"].is_object()) throw ConfigError(file, 0, "meta", "must be an object");
    s.meta = doc["meta"];
  }
  if (!doc.contains("records")) throw ConfigError(file, 0, "records", "missing: the measured kernels");
  const json& records = doc["records"];
  if (!records.is_array()) throw ConfigError(file, 0, "records", "must be an array of records");
  if (records.empty()) throw ConfigError(file, 0, "records", "is empty: nothing to fit");
  s.records.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) s.records.push_back(read_sweep_record(records[i], file, i));
  return s;
}

KernelSweep load_kernel_sweep(const std::string& path) {
  return kernel_sweep_from_text(read_input_file(path), path);  // a folder or an unreadable file: path and reason
}

json sweep_record_to_json(const SweepRecord& r) {
  json j = {{"op", to_string(r.op)}, {"dtype", r.dtype}};
  if (is_conv(r.op)) {
    const ConvSizes& z = r.conv;
    j.update({{"n", z.n}, {"c", z.c}, {"h", z.h}, {"w", z.w}, {"k", z.k}, {"r", z.r}, {"s", z.s},
              {"stride", z.stride_h}, {"pad", z.pad_h}, {"groups", z.groups}, {"layout", r.layout}});
    if (z.stride_w != z.stride_h) j["stride_w"] = z.stride_w;
    if (z.pad_w != z.pad_h) j["pad_w"] = z.pad_w;
    if (z.dilation != 1) j["dilation"] = z.dilation;
    if (r.dtype == "float32" && !r.tf32) j["tf32"] = false;
  } else if (r.op == SweepOp::Gemm || r.op == SweepOp::Bmm) {
    if (r.op == SweepOp::Bmm) j["batch"] = r.batch;
    j.update({{"m", r.m}, {"n", r.n}, {"k", r.k}});
  } else if (r.op == SweepOp::SdpaFwd || r.op == SweepOp::SdpaFwdBwd) {
    j.update({{"b", r.b}, {"heads", r.heads}, {"seq", r.seq}, {"d", r.d}, {"causal", r.causal}});
  } else {
    j.update({{"numel", r.numel}, {"bytes", r.bytes}});
    if (r.op == SweepOp::BatchNormFwd) j["c"] = r.channels;
  }
  if (!r.src.empty()) j["src"] = r.src;
  if (r.us > 0) j["us"] = r.us;
  if (r.us_min > 0) j["us_min"] = r.us_min;
  return j;
}

}  // namespace dlsim
