#pragma once
// Output files written whole or not at all. Every file dlsim writes for a user (traces, snapshots, plans,
// hardware files, reports, runs.csv) goes through write_file_atomically: the text goes to a new file beside the
// target, which is renamed over the target only once it is complete, so a full disk, a bad path or a kill
// leaves the old file (or none), never a truncated one that a later step would read as if it were whole.
#include <string>
#include <string_view>

namespace dlsim {

// Replaces `path` by `text`. The temporary file is created in the same folder (a rename within one file system
// is atomic), synced, and renamed over `path`; a `path` that is a symbolic link is written through (its target is
// replaced, the link kept). On any failure the temporary file is removed, `path` is left as it was, and a
// ConfigError names `path` (line 0, `key` as its key: the option that named the file, "" when none) with the
// reason (strerror: "No such file or directory", "Is a directory", "No space left on device", ...).
void write_file_atomically(const std::string& path, std::string_view text, const std::string& key = "");

// Writes all of `text` to the open descriptor `fd`, going on after short writes and EINTR. Returns false with
// errno set when a write fails.
bool write_fully(int fd, std::string_view text);

}  // namespace dlsim
