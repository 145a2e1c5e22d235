#include "hw/fitted/fitted_kernels_yaml.h"
#include "common/strings.h"

#include <iomanip>
#include <sstream>

namespace dlsim {
namespace {

constexpr double kMaxCoefficient = 1e6;

double read_coefficient(const YamlMap& m, const std::string& key, double max_value) {
  if (!m.has(key)) return 0;
  const double v = m.get_double(key);
  if (!(v >= 0 && v <= max_value))
    m.fail(key, "must be in [0, " + significant(max_value) + "], got " + significant(v));
  return v;
}

FittedKernelClass read_class(const YamlMap& m) {
  m.check_keys({"fixed_us", "flop_scale", "wave_scale", "byte_scale", "channel_scale", "channel_bwd_scale",
                "row_scale", "row_bwd_scale", "byte_bwd_scale", "window_scale", "window_bwd_scale", "input_scale",
                "chunk_scale", "records"});
  FittedKernelClass c;
  if (!m.has("fixed_us")) m.fail("fixed_us", "missing: every class has a fixed cost (0 allowed)");
  c.fixed_us = read_coefficient(m, "fixed_us", kMaxCoefficient);
  c.flop_scale = read_coefficient(m, "flop_scale", kMaxCoefficient);
  c.wave_scale = read_coefficient(m, "wave_scale", kMaxCoefficient);
  c.byte_scale = read_coefficient(m, "byte_scale", kMaxCoefficient);
  c.channel_scale = read_coefficient(m, "channel_scale", kMaxCoefficient);
  c.channel_bwd_scale = read_coefficient(m, "channel_bwd_scale", kMaxCoefficient);
  c.row_scale = read_coefficient(m, "row_scale", kMaxCoefficient);
  c.row_bwd_scale = read_coefficient(m, "row_bwd_scale", kMaxCoefficient);
  c.byte_bwd_scale = read_coefficient(m, "byte_bwd_scale", kMaxCoefficient);
  c.window_scale = read_coefficient(m, "window_scale", kMaxCoefficient);
  c.window_bwd_scale = read_coefficient(m, "window_bwd_scale", kMaxCoefficient);
  c.input_scale = read_coefficient(m, "input_scale", kMaxCoefficient);
  c.chunk_scale = read_coefficient(m, "chunk_scale", kMaxCoefficient);
  c.chunk_scale = read_coefficient(m, "chunk_scale", kMaxCoefficient);
  if (m.has("records")) {
    c.records = m.get_int("records");
    if (c.records < 0) m.fail("records", "must not be negative, got " + std::to_string(c.records));
  }
  return c;
}

}  // namespace

std::string fitted_yaml_quoted(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (ch == '\n') out += "\\n";
    else if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) out += '?';
    else out += ch;
  }
  return out + "\"";
}

FittedKernels fitted_kernels_from_yaml(const YamlMap& section) {
  section.check_keys({"fitted_from", "timing", "fixed_includes_dispatch", "tile", "min_split_k", "classes"});
  FittedKernels f;
  f.fitted_from = section.get_text("fitted_from", "");
  f.timing = section.get_text("timing", "");
  if (section.has("fixed_includes_dispatch")) f.fixed_includes_dispatch = section.get_bool("fixed_includes_dispatch");
  if (section.has("tile")) {
    f.tile = section.get_double("tile");
    if (!(f.tile >= 1 && f.tile <= 4096)) section.fail("tile", "must be in [1, 4096], got " + significant(f.tile));
  }
  if (section.has("min_split_k")) {
    f.min_split_k = section.get_double("min_split_k");
    if (!(f.min_split_k >= 1 && f.min_split_k <= 1e9))
      section.fail("min_split_k", "must be in [1, 1e9], got " + significant(f.min_split_k));
  }
  if (!section.has("classes")) section.fail("classes", "missing: the fitted classes (dlsim fit-kernels writes them)");
  const YamlMap classes = section.get_map("classes");
  for (const auto& kv : classes.node()) {
    const std::string name = yaml_key(kv.first, classes.file(), "kernel_model.classes");
    std::string why;
    if (!is_kernel_class_name(name, why)) classes.fail(name, why);
    f.classes[name] = read_class(classes.get_map(name));
  }
  if (f.classes.empty()) section.fail("classes", "holds no class: a fitted model prices nothing");
  return f;
}

std::string fitted_kernels_to_yaml(const FittedKernels& f) {
  std::ostringstream o;
  o << "kernel_model:\n"
    << "  fitted_from: " << fitted_yaml_quoted(f.fitted_from) << '\n';
  if (!f.timing.empty()) o << "  timing: " << fitted_yaml_quoted(f.timing) << '\n';
  if (f.fixed_includes_dispatch) o << "  fixed_includes_dispatch: true\n";
  o << "  tile: " << significant(f.tile) << '\n'
    << "  min_split_k: " << significant(f.min_split_k) << '\n'
    << "  classes:\n";
  for (const auto& [name, c] : f.classes) o << "    " << name << ": " << fitted_class_to_yaml(c) << '\n';
  return o.str();
}

std::string fitted_class_to_yaml(const FittedKernelClass& c) {
  auto optional = [](const char* key, double v) { return v > 0 ? ", " + std::string(key) + ": " + significant(v) : ""; };
  return "{fixed_us: " + significant(c.fixed_us) + ", flop_scale: " + significant(c.flop_scale) +
         ", wave_scale: " + significant(c.wave_scale) + ", byte_scale: " + significant(c.byte_scale) +
         optional("channel_scale", c.channel_scale) + optional("channel_bwd_scale", c.channel_bwd_scale) +
         optional("row_scale", c.row_scale) + optional("row_bwd_scale", c.row_bwd_scale) +
         optional("byte_bwd_scale", c.byte_bwd_scale) + optional("window_scale", c.window_scale) +
         optional("window_bwd_scale", c.window_bwd_scale) + optional("input_scale", c.input_scale) +
         optional("chunk_scale", c.chunk_scale) + ", records: " + std::to_string(c.records) + "}";
}

}  // namespace dlsim
