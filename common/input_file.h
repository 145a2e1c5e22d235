#pragma once
// Reading an input file the user named, with the path mistakes said in the user's words: a folder given as a
// file, a file that does not exist or cannot be read (no permission, a name too long) is a ConfigError naming the
// path and the reason, exit 2, never an empty file read as if it were one or an "internal error".
#include <string>

namespace dlsim {

// The whole content of the file at `path` (bytes as they are). Throws ConfigError(path, 0, key, reason).
std::string read_input_file(const std::string& path, const std::string& key = "");

}  // namespace dlsim
