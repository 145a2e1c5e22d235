#pragma once
// The shared buffer-lifetime sets (../shared/data/dsa, DLSIM_SHARED_DIR in the tests' build), sorted by path; none
// when that folder is not there (a clone without it), so that the tests over them skip rather than fail.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace dlsim::testing {

inline std::vector<std::string> shared_instance_files() {
  std::vector<std::string> files;
  const std::filesystem::path dir = std::filesystem::path(DLSIM_SHARED_DIR) / "data" / "dsa";
  if (!std::filesystem::exists(dir)) return files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.path().extension() == ".csv") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace dlsim::testing
