#pragma once
// What values a parameter accepts: the valid range or set of a ParamSpec, declared beside its name, type and
// default (as ns-3 declares an attribute with MakeDoubleChecker<double>(min, max)). Params are checked where
// they are read (YAML files, --param KEY=VALUE), so that an error names the file, the line and the key, and a
// sweep rejects a bad value before it runs anything; `dlsim list` prints text().
//
//   {"init_size_mb", ParamType::Int, int64_t{0}, "MiB reserved up front", ParamCheck::at_least(0)}
//   a value of -5 in exp.yaml line 4 gives:  exp.yaml:4: 'pool.init_size_mb': must be >= 0, got -5
//   and `dlsim list` prints:                 init_size_mb (int, default 0, valid: >= 0): MiB reserved up front
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace dlsim {

// The largest size a *_mb parameter accepts: 2^30 MiB (1 PiB), far above any device, and small enough that the
// conversion to bytes cannot wrap (a larger value silently became a small one).
inline constexpr double kMaxMebibytes = 1073741824.0;

using ParamValue = std::variant<int64_t, double, bool, std::string>;
std::string to_string(const ParamValue& v);

class ParamCheck {
 public:
  ParamCheck() = default;  // every value of the parameter's type is valid

  // Numbers (Int or Double parameters).
  static ParamCheck at_least(double lo);                 // v >= lo
  static ParamCheck greater_than(double lo);             // v > lo
  static ParamCheck in_range(double lo, double hi);      // lo <= v <= hi
  static ParamCheck above_up_to(double lo, double hi);   // lo < v <= hi
  static ParamCheck between(double lo, double hi);       // lo < v < hi
  static ParamCheck power_of_two();                      // 1, 2, 4, ...
  // Strings.
  static ParamCheck one_of(std::vector<std::string> choices);
  // Strings of a small syntax of their own (a list of ranges): `test` says whether a string is valid; `text`
  // describes the valid strings for listings and errors ("a list of block ranges like 0-3,4-7").
  static ParamCheck string_where(std::function<bool(const std::string&)> test, std::string text);
  // 0 (a parameter's "off" or "not set") or a value `other` accepts.
  static ParamCheck zero_or(const ParamCheck& other);

  // nullopt when `v` is valid; else why not: "must be >= 0, got -5", "must be in (0, 1], got 1.5",
  // "unknown value 'XF'; valid: BF, FF".
  std::optional<std::string> violation(const ParamValue& v) const;
  // The valid values, for listings: ">= 0", "[0, 1]", "0 or a power of two", "BF, FF"; "" when any value is.
  const std::string& text() const { return text_; }
  bool accepts_any() const { return !test_; }
  // The declared bounds and choices, for tools that draw valid values (dlsim simfuzz): the interval's ends
  // (whether each is open or closed is for violation() to say), the strings of one_of, whether 0 is also valid.
  const std::optional<double>& lower() const { return lo_; }
  const std::optional<double>& upper() const { return hi_; }
  const std::vector<std::string>& choices() const { return choices_; }
  bool zero_allowed() const { return zero_ok_; }

 private:
  // phrase: what the message puts after "must be" ("in [0, 1]"); empty for a list of choices.
  ParamCheck(std::function<bool(const ParamValue&)> test, std::string text, std::string phrase)
      : test_(std::move(test)), text_(std::move(text)), phrase_(std::move(phrase)) {}
  static ParamCheck numeric(std::function<bool(double)> test, const std::string& text, const std::string& phrase);

  std::function<bool(const ParamValue&)> test_;
  std::string text_;
  std::string phrase_;
  std::optional<double> lo_, hi_;
  std::vector<std::string> choices_;
  bool zero_ok_ = false;
};

}  // namespace dlsim
