#pragma once
// An error in a user's input (YAML, CSV, ONNX, command line) that names where it is.
// Every parser in dlsim throws this, and the CLI prints what() and exits non-zero.
#include <stdexcept>
#include <string>

namespace dlsim {

class ConfigError : public std::runtime_error {
 public:
  // file: the input's path; line: 1-based, 0 when unknown; key: the field, "" when none.
  ConfigError(std::string file, int line, std::string key, const std::string& message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }  // what() without the place

 private:
  std::string file_;
  int line_;
  std::string key_;
  std::string message_;
};

}  // namespace dlsim
