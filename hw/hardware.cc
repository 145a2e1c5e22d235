#include "hw/hardware.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "common/yaml_reader.h"
#include "hw/pcie_link.h"
#include "hw/gpu_spec_file.h"
#include "hw/hardware_base.h"

namespace dlsim {

std::unique_ptr<KernelCostModel> make_cost_model(const GpuSpec& spec) {
  const auto& entry = kernel_model_registry().get(spec.kernel_model, spec.file, 0, "kernel_model");
  Params p(entry.params);  // a spec built in code may name none: the declared defaults
  for (const auto& [k, v] : spec.kernel_model_params.values()) p.set(k, v);
  return entry.factory(p, spec);
}

namespace {
// `over` laid onto a copy of `base`: mappings merge key by key, anything else replaces.
YAML::Node merged(const YAML::Node& base, const YAML::Node& over) {
  if (!over.IsMap() || !base.IsMap()) return YAML::Clone(over);
  YAML::Node out = YAML::Clone(base);
  for (const auto& kv : over) {
    const std::string k = kv.first.Scalar();
    out[k] = out[k] ? merged(out[k], kv.second) : YAML::Clone(kv.second);
  }
  return out;
}

// A hardware file parsed once per process and content (the calibrated h100-sxm.yaml is about 1 MB: parsing it
// took most of a small experiment's time, twice per run, and every sweep point and fuzz case loads it again).
// Keyed by path, size and modification time, so that a file edited between loads is read afresh (a file with a
// base also when a file of its chain was edited); the document is never modified (merged() works on a clone)
// and the spec is copied out.
// Thread-safe (`dlsim sweep --jobs N` loads hardware from several threads): an entry is shared, never handed out
// as a reference into the map (a bound clear() would leave it dangling), and everything that reads or fills an
// entry (the yaml-cpp document, whose nodes share one memory pool, and the lazily parsed spec) does so under the
// lock; what is built from the copies (cost models, links) happens outside it.
struct ParsedHardwareFile {
  YAML::Node document;
  // With overrides: the document without its measured tables (cloned once), and the tables read once; loads with
  // overrides that leave the tables alone merge into the former and copy the latter (a sweep over hw_override
  // values no longer clones and reads the whole file per point). tables_failed: the tables have an error, which
  // the full path reports as it always did.
  YAML::Node without_tables;
  std::shared_ptr<const GpuSpec> tables;
  bool tables_failed = false;
  // Read on the first load without overrides (overrides may complete a file); copied by each load outside the
  // lock (a calibrated file's spec holds thousands of measured kernel times).
  std::shared_ptr<const GpuSpec> spec;
  // The files of its chain of bases as they were when it was read (a base edited since makes it stale).
  std::vector<std::tuple<std::string, uintmax_t, std::filesystem::file_time_type>> base_stamps;
};

std::mutex& hardware_cache_mutex() {
  static std::mutex mutex;
  return mutex;
}

// A file's identity in the cache: its path, size and modification time, so that a file edited between loads is
// read afresh.
using HardwareFileStamp = std::tuple<std::string, uintmax_t, std::filesystem::file_time_type>;

HardwareFileStamp hardware_file_stamp(const std::string& path) {
  std::error_code ec;
  return std::make_tuple(path, std::filesystem::file_size(path, ec), std::filesystem::last_write_time(path, ec));
}

// Call with hardware_cache_mutex() held. `chain`: the files whose `base:` led here (hw/hardware_base.h).
std::shared_ptr<ParsedHardwareFile> parsed_hardware_file(const std::string& path, std::vector<std::string>& chain) {
  static std::map<HardwareFileStamp, std::shared_ptr<ParsedHardwareFile>> cache;
  const HardwareFileStamp key = hardware_file_stamp(path);
  if (auto it = cache.find(key); it != cache.end()) {
    const auto& bases = it->second->base_stamps;
    if (std::all_of(bases.begin(), bases.end(), [](const HardwareFileStamp& b) {
          return hardware_file_stamp(std::get<0>(b)) == b;
        }))
      return it->second;
    cache.erase(it);  // a base changed under it
  }
  auto f = std::make_shared<ParsedHardwareFile>();
  f->document = load_yaml_file(path);
  const std::string base = hardware_base_of(f->document, path);
  if (!base.empty()) {
    check_hardware_base(f->document, path, base, chain);
    chain.push_back(path);
    const std::shared_ptr<ParsedHardwareFile> under = parsed_hardware_file(base, chain);
    if (!under->spec)  // the base alone must be a hardware file: its errors name it
      under->spec = std::make_shared<const GpuSpec>(gpu_spec_from_yaml(under->document, base));
    f->document = overlay_hardware(under->document, f->document);
    f->base_stamps = under->base_stamps;
    f->base_stamps.push_back(hardware_file_stamp(base));
  }
  if (cache.size() >= 64) cache.clear();  // bound: a long sweep over generated files
  cache.emplace(key, f);
  return f;
}

constexpr const char* kMeasuredTables[] = {"kernel_times", "conv_workspace"};

bool sets_measured_tables(const YAML::Node& overrides) {
  for (const char* key : kMeasuredTables)
    if (overrides[key]) return true;
  return false;
}

// Call with hardware_cache_mutex() held. False when the tables cannot be shared (an error in them, or a document
// that is not a mapping): the caller takes the full path, whose errors are the file's own.
bool prepare_shared_tables(ParsedHardwareFile& f, const std::string& path) {
  if (f.tables) return true;
  if (f.tables_failed || !f.document.IsMap()) return false;
  try {
    f.tables = std::make_shared<const GpuSpec>(measured_tables_from_yaml(f.document, path));
  } catch (const std::exception&) {
    f.tables_failed = true;
    return false;
  }
  YAML::Node rest(YAML::NodeType::Map);
  for (const auto& kv : f.document) {
    const std::string k = kv.first.Scalar();
    if (k != kMeasuredTables[0] && k != kMeasuredTables[1]) rest[k] = YAML::Clone(kv.second);
  }
  f.without_tables = rest;
  return true;
}

}  // namespace

Hardware load_hardware(const std::string& name_or_path, const YAML::Node& overrides) {
  const std::string path = resolve_hw_path(name_or_path);
  std::unique_lock<std::mutex> lock(hardware_cache_mutex());
  std::vector<std::string> chain;
  const std::shared_ptr<ParsedHardwareFile> file = parsed_hardware_file(path, chain);
  if (overrides.IsMap() && !sets_measured_tables(overrides) && prepare_shared_tables(*file, path)) {
    YAML::Node document = merged(file->without_tables, overrides);  // a clone: read outside the lock
    const std::shared_ptr<const GpuSpec> tables = file->tables;
    lock.unlock();
    return hardware_from_spec(gpu_spec_from_yaml(document, path, tables.get()));
  }
  if (overrides.IsMap()) {
    YAML::Node document = merged(file->document, overrides);  // a clone: read outside the lock
    lock.unlock();
    return hardware_from_yaml(document, path);
  }
  if (!file->spec)  // an error leaves it unset: thrown again
    file->spec = std::make_shared<const GpuSpec>(gpu_spec_from_yaml(file->document, path));
  const std::shared_ptr<const GpuSpec> spec = file->spec;
  lock.unlock();
  return hardware_from_spec(*spec);
}

Hardware hardware_from_yaml(const YAML::Node& node, const std::string& path) {
  return hardware_from_spec(gpu_spec_from_yaml(node, path));
}

Hardware hardware_from_spec(GpuSpec spec) {
  Hardware h;
  h.spec = std::move(spec);
  h.kernels = make_cost_model(h.spec);
  h.link = std::make_unique<PcieLink>(h.spec);
  return h;
}

}  // namespace dlsim
