#include "common/json_fields.h"

#include "common/config_error.h"
#include "common/strings.h"

namespace dlsim {

JsonFields::JsonFields(const Json& j, std::string file, std::string where)
    : j_(j), file_(std::move(file)), where_(std::move(where)) {}

void JsonFields::fail(const std::string& field, const std::string& message) const {
  throw ConfigError(file_, 0, field.empty() ? where_ : key(field), message);
}

std::string JsonFields::key(const std::string& field) const { return where_.empty() ? field : where_ + "." + field; }

void JsonFields::require_object() const {
  if (!j_.is_object()) fail("", "must be an object, got " + j_.dump().substr(0, 60));
}

void JsonFields::allow_only(const std::vector<std::string>& allowed, const std::string& what) const {
  for (const auto& [k, v] : j_.items()) {
    bool known = false;
    for (const std::string& a : allowed) known = known || a == k;
    if (!known) fail(k, "unknown field" + (what.empty() ? "" : " " + what) + "; valid: " + join(allowed));
  }
}

bool JsonFields::has(const std::string& field) const { return j_.contains(field) && !j_.at(field).is_null(); }

const JsonFields::Json& JsonFields::at(const std::string& field) const {
  if (!j_.contains(field)) fail(field, "missing");
  return j_.at(field);
}

std::string JsonFields::text(const std::string& field) const {
  const Json& v = at(field);
  if (!v.is_string()) fail(field, "must be a string, got " + v.dump().substr(0, 60));
  return v.get<std::string>();
}

bool JsonFields::flag(const std::string& field) const {
  const Json& v = at(field);
  if (!v.is_boolean()) fail(field, "must be true or false, got " + v.dump().substr(0, 60));
  return v.get<bool>();
}

int64_t JsonFields::integer(const std::string& field, int64_t least, int64_t most) const {
  return integer_of(at(field), field, least, most);
}

int64_t JsonFields::integer_of(const Json& v, const std::string& field, int64_t least, int64_t most) const {
  const std::string range = "[" + std::to_string(least) + ", " + std::to_string(most) + "]";
  if (!v.is_number_integer()) fail(field, "must be an integer in " + range + ", got " + v.dump().substr(0, 60));
  // An unsigned value above int64's range would wrap in get<int64_t>(): compare it unsigned first.
  if (v.is_number_unsigned() && (most < 0 || v.get<uint64_t>() > static_cast<uint64_t>(most)))
    fail(field, "must be in " + range + ", got " + v.dump());
  const int64_t x = v.get<int64_t>();
  if (x < least || x > most) fail(field, "must be in " + range + ", got " + std::to_string(x));
  return x;
}

double JsonFields::number(const std::string& field, double least, double most, bool least_open,
                          const std::string& unit) const {
  const Json& v = at(field);
  if (!v.is_number()) fail(field, "must be a number" + (unit.empty() ? "" : " (" + unit + ")") + ", got " +
                                      v.dump().substr(0, 60));
  const double x = v.get<double>();
  const bool above = least_open ? x > least : x >= least;
  if (!(above && x <= most))
    fail(field, "must be in " + std::string(least_open ? "(" : "[") + significant(least) + ", " + significant(most) +
                    "]" + (unit.empty() ? "" : " " + unit) + ", got " + v.dump());
  return x;
}

const JsonFields::Json& JsonFields::array(const std::string& field) const {
  const Json& v = at(field);
  if (!v.is_array()) fail(field, "must be a list, got " + v.dump().substr(0, 60));
  return v;
}

JsonFields JsonFields::object(const std::string& field) const {
  JsonFields f(at(field), file_, key(field));
  f.require_object();
  return f;
}

JsonFields JsonFields::element(const Json& array, const std::string& field, size_t index) const {
  return JsonFields(array[index], file_, key(field) + "[" + std::to_string(index) + "]");
}

}  // namespace dlsim
