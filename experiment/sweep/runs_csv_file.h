#pragma once
// A sweep's runs.csv while it runs, safe against being killed at any moment (SIGKILL, out of memory, a node
// lost): the header, then one complete line per finished run, each written with a single write() and nothing
// buffered in the process, so a kill loses no finished row. A write cut short (a kill during a large write)
// can leave at most a last line without its line break; --resume drops such a line (experiment/sweep/resume.h) and runs
// its point again. The final file, in the sweep's order, replaces it atomically (write_file_atomically).
#include <cstdint>
#include <mutex>
#include <string>

#include "common/atomic_file.h"  // write_file_atomically, for the final file

namespace dlsim {

class RunsCsvFile {
 public:
  // Replaces `path` by a file holding `header` as its first line (atomically: write_file_atomically).
  static RunsCsvFile create(const std::string& path, const std::string& header);
  // Opens an existing file to append to, first cutting it to its first `keep_bytes` bytes (a torn last line).
  static RunsCsvFile append_to(const std::string& path, uint64_t keep_bytes);
  RunsCsvFile(RunsCsvFile&& other) noexcept;
  RunsCsvFile& operator=(RunsCsvFile&&) = delete;
  RunsCsvFile(const RunsCsvFile&) = delete;
  ~RunsCsvFile();

  // Appends `line` and a line break with one write(); safe to call from several threads.
  void append(const std::string& line);
  const std::string& path() const { return path_; }

 private:
  RunsCsvFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  void write_all(const std::string& text);
  std::string path_;
  int fd_ = -1;
  std::mutex mutex_;
};

}  // namespace dlsim
