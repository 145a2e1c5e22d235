#pragma once
// The fields of one JSON object of an input file (a document, a record, a trace event), read strictly: every
// error is a ConfigError naming the file and the object's dotted path ("records[3].us"), and says what the field
// must be and what it was. The JSON loaders (recorded PyTorch steps, kernel sweeps, profiler traces, NCCL
// measurements) read their objects through it, adding the checks that are theirs alone.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dlsim {

class JsonFields {
 public:
  using Json = nlohmann::json;

  // `where`: the object's path in the file, "" for the document itself. `j` must outlive the reader.
  JsonFields(const Json& j, std::string file, std::string where);

  [[noreturn]] void fail(const std::string& field, const std::string& message) const;
  std::string key(const std::string& field) const;  // where.field (the field alone at the top)
  void require_object() const;                       // "must be an object, got ..."
  // Each field not in `allowed` is an error listing them (`what`: "for op 'conv_fwd'", say; "" for none).
  void allow_only(const std::vector<std::string>& allowed, const std::string& what = "") const;

  bool has(const std::string& field) const;  // present and not null
  const Json& at(const std::string& field) const;  // "missing" if absent
  std::string text(const std::string& field) const;
  bool flag(const std::string& field) const;
  // An integer in [least, most]; one written as a float (3.0) or a string is refused.
  int64_t integer(const std::string& field, int64_t least, int64_t most) const;
  // The same check of a value found elsewhere (a list's element), its errors naming `field` ("dims[2]").
  int64_t integer_of(const Json& v, const std::string& field, int64_t least, int64_t most) const;
  // A number in [least, most], or (least, most] with `least_open`; `unit` (" us", say) names it in the message.
  double number(const std::string& field, double least, double most, bool least_open = false,
                const std::string& unit = "") const;
  const Json& array(const std::string& field) const;  // "must be a list"
  JsonFields object(const std::string& field) const;   // the object at `field`, as a reader
  JsonFields element(const Json& array, const std::string& field, size_t index) const;  // field[index]

  const Json& value() const { return j_; }  // the object read
  const std::string& file() const { return file_; }
  const std::string& where() const { return where_; }

 private:
  const Json& j_;
  std::string file_;
  std::string where_;
};

}  // namespace dlsim
