#pragma once
// A hardware file may start from another: `base: h100-sxm` (a shipped name, or a path relative to the file's own
// folder) lays the file's keys over that file's, mapping by mapping as an experiment's hw_override does, so that a
// variant (the same GPU with PyTorch's host model, configs/hw/h100-sxm-pytorch.yaml) names only what it changes
// and a recalibrated base reaches it. The base is read as a hardware file of its own first, so that an error in it
// names its file; the variant's own keys keep their lines, so that an error in one names the variant's file and line.
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace dlsim {

// The most files a chain of bases may hold beyond the first (a longer one is refused as a likely cycle).
inline constexpr int kMaxHardwareBases = 8;

// The base file `doc` names (a shipped name resolved to configs/hw, a path against the folder of `path`), or ""
// when it names none. A base that is not a string or not found is a ConfigError at `path`'s `base` line.
std::string hardware_base_of(const YAML::Node& doc, const std::string& path);
// Refuses following `base` from the files already in `chain` (the variant first): a file met again (a cycle)
// or a chain longer than kMaxHardwareBases, as a ConfigError at `path`'s `base` line.
void check_hardware_base(const YAML::Node& doc, const std::string& path, const std::string& base,
                         const std::vector<std::string>& chain);
// `over` (a hardware mapping) laid onto `base`: where both hold a mapping under a key they merge, key by key at
// any depth; otherwise `over`'s value replaces. Over's `base` key is dropped. Nothing is copied or modified: the
// result refers to the nodes of both (so that over's nodes keep their lines), and neither may be modified after.
YAML::Node overlay_hardware(const YAML::Node& base, const YAML::Node& over);
// What a file written at `out` says in `base:` to start from the hardware file `hw` (a name or a path, as --hw
// takes it): the shipped name when `hw` is a shipped file, else its path from `out`'s folder ("./x.yaml" for a
// file beside it, so that it reads as a path and not a name). dlsim calibrate --torch-profile and
// fit-interconnect write their files so.
std::string hardware_base_reference(const std::string& hw, const std::string& out);
// The document of the hardware file at `path` with its chain of bases laid under it, each base checked alone
// (uncached: hw/hardware.cc keeps its own cache of parsed files).
YAML::Node load_hardware_document(const std::string& path);

}  // namespace dlsim
