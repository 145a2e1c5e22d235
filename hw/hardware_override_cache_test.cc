// load_hardware with overrides reads a file's measured tables once and merges each override into the rest of the
// file: the spec must be the one read from the whole file with the override merged in by hand, for every shipped
// hardware file, and an override of a table (or an error) must take the full path and read as before.
#include <catch2/catch.hpp>

#include "common/config_error.h"
#include "common/yaml_reader.h"
#include "hw/gpu_spec_file.h"
#include "hw/hardware.h"
#include "hw/hardware_base.h"

using namespace dlsim;

namespace {

void check_same_spec(const GpuSpec& a, const GpuSpec& b) {
  CHECK(a.name == b.name);
  CHECK(a.file == b.file);
  CHECK(a.description == b.description);
  CHECK(a.sms == b.sms);
  CHECK(a.memory_bytes == b.memory_bytes);
  CHECK(a.total_memory_bytes == b.total_memory_bytes);
  CHECK(a.hbm_bandwidth == b.hbm_bandwidth);
  CHECK(a.peak_fp32 == b.peak_fp32);
  CHECK(a.peak_tf32 == b.peak_tf32);
  CHECK(a.peak_bf16 == b.peak_bf16);
  CHECK(a.peak_fp16 == b.peak_fp16);
  CHECK(a.kernel_model == b.kernel_model);
  CHECK(a.kernel_model_params.values() == b.kernel_model_params.values());
  CHECK(a.pcie_h2d_pinned == b.pcie_h2d_pinned);
  CHECK(a.pcie_d2h_pinned == b.pcie_d2h_pinned);
  CHECK(a.pcie_latency_ns == b.pcie_latency_ns);
  CHECK(a.copy_engines == b.copy_engines);
  CHECK(a.launch_overhead_ns == b.launch_overhead_ns);
  CHECK(a.host_adam_bytes_per_s == b.host_adam_bytes_per_s);
  CHECK(a.concurrency == b.concurrency);
  CHECK(a.malloc_base_ns == b.malloc_base_ns);
  CHECK(a.free_ns_per_gib == b.free_ns_per_gib);
  CHECK(a.kernel_times == b.kernel_times);
  CHECK(a.kernel_times_by_batch == b.kernel_times_by_batch);
  CHECK(a.conv_workspace == b.conv_workspace);
  CHECK(a.conv_workspace_by_batch == b.conv_workspace_by_batch);
  CHECK(a.op_class_scale == b.op_class_scale);
  CHECK(a.op_class_scale_path == b.op_class_scale_path);
  CHECK(a.eager_host == b.eager_host);
}

// The whole file with `set` applied to a copy: the spec the cache must reproduce.
template <class Set>
GpuSpec by_hand(const std::string& name, Set set) {
  const std::string path = resolve_hw_path(name);
  YAML::Node doc = YAML::Clone(load_hardware_document(path));  // its base laid under it, if it has one
  set(doc);
  return gpu_spec_from_yaml(doc, path);
}

}  // namespace

TEST_CASE("an override gives the spec of the whole file with it merged, from the cache, twice") {
  for (const std::string& name : list_hw_names()) {
    INFO(name);
    const YAML::Node over = YAML::Load("{pcie: {h2d_pinned_gb_per_s: 7}, launch_overhead_us: 3.5}");
    const GpuSpec want = by_hand(name, [](YAML::Node& d) {
      d["pcie"]["h2d_pinned_gb_per_s"] = 7;
      d["launch_overhead_us"] = 3.5;
    });
    for (int round = 0; round < 2; ++round) check_same_spec(load_hardware(name, over).spec, want);
    const GpuSpec plain = load_hardware(name).spec;  // the cache's other path, untouched by the override
    CHECK(plain.launch_overhead_ns != want.launch_overhead_ns);
    CHECK(plain.kernel_times == want.kernel_times);
  }
}

TEST_CASE("an override of a measured table takes the full path") {
  const YAML::Node over = YAML::Load("{kernel_times: [{signature: 'relu f32 [8]', ns: 1234}], kernel_model: table}");
  const GpuSpec got = load_hardware("h100-sxm", over).spec;
  REQUIRE(got.kernel_times.size() == 1);
  CHECK(got.kernel_times.at("relu f32 [8]") == 1234);
}

TEST_CASE("a bad override is the same error through the cache as from the whole file") {
  const YAML::Node bad = YAML::Load("{pcie: {h2d_pinned_gb_per_s: -1}}");
  auto error_of = [](auto load) {
    try {
      load();
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // A file without a base (h100-sxm-harness), whose whole document hardware_from_yaml takes as it is.
  const std::string cached = error_of([&] { load_hardware("h100-sxm-harness", bad); });
  CHECK(cached.find("h2d_pinned_gb_per_s") != std::string::npos);
  CHECK(cached == error_of([&] { load_hardware("h100-sxm-harness", bad); }));
  const std::string path = resolve_hw_path("h100-sxm-harness");
  YAML::Node whole = YAML::Clone(load_yaml_file(path));  // a clone, as the merge always made
  whole["pcie"]["h2d_pinned_gb_per_s"] = -1;
  CHECK(cached == error_of([&] { hardware_from_yaml(YAML::Clone(whole), path); }));
}
