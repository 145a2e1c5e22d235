#include "common/param_check.h"

#include <bit>
#include <cmath>
#include <cstdio>

#include "common/strings.h"

namespace dlsim {

namespace {

// "%g" keeps limits short and the same on every run: 20, 0.5, 1e+06.
std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// An Int or Double parameter's value as a double; nullopt for Bool and String.
std::optional<double> as_number(const ParamValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (auto* d = std::get_if<double>(&v)) return *d;
  return std::nullopt;
}

}  // namespace

std::string to_string(const ParamValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) return number_text(*d);
  if (auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return std::get<std::string>(v);
}

ParamCheck ParamCheck::numeric(std::function<bool(double)> test, const std::string& text, const std::string& phrase) {
  return ParamCheck(
      [test = std::move(test)](const ParamValue& v) {
        const auto x = as_number(v);
        return x && test(*x);
      },
      text, phrase);
}

ParamCheck ParamCheck::at_least(double lo) {
  const std::string t = ">= " + number_text(lo);
  return numeric([lo](double x) { return x >= lo; }, t, t);
}

ParamCheck ParamCheck::greater_than(double lo) {
  const std::string t = "> " + number_text(lo);
  return numeric([lo](double x) { return x > lo; }, t, t);
}

ParamCheck ParamCheck::in_range(double lo, double hi) {
  const std::string t = "[" + number_text(lo) + ", " + number_text(hi) + "]";
  return numeric([lo, hi](double x) { return x >= lo && x <= hi; }, t, "in " + t);
}

ParamCheck ParamCheck::above_up_to(double lo, double hi) {
  const std::string t = "(" + number_text(lo) + ", " + number_text(hi) + "]";
  return numeric([lo, hi](double x) { return x > lo && x <= hi; }, t, "in " + t);
}

ParamCheck ParamCheck::between(double lo, double hi) {
  const std::string t = "(" + number_text(lo) + ", " + number_text(hi) + ")";
  return numeric([lo, hi](double x) { return x > lo && x < hi; }, t, "in " + t);
}

ParamCheck ParamCheck::power_of_two() {
  return numeric(
      [](double x) {
        return x >= 1 && x == std::floor(x) && x < 0x1p63 && std::has_single_bit(static_cast<uint64_t>(x));
      },
      "a power of two", "a power of two");
}

ParamCheck ParamCheck::one_of(std::vector<std::string> choices) {
  std::string text = join(choices);
  return ParamCheck(
      [choices = std::move(choices)](const ParamValue& v) {
        const auto* s = std::get_if<std::string>(&v);
        if (!s) return false;
        for (const auto& c : choices)
          if (c == *s) return true;
        return false;
      },
      std::move(text), "");
}

ParamCheck ParamCheck::zero_or(const ParamCheck& other) {
  return ParamCheck(
      [test = other.test_](const ParamValue& v) {
        const auto x = as_number(v);
        return (x && *x == 0) || !test || test(v);
      },
      "0 or " + other.text_, "0 or " + other.phrase_);
}

std::optional<std::string> ParamCheck::violation(const ParamValue& v) const {
  if (!test_ || test_(v)) return std::nullopt;
  if (phrase_.empty()) return "unknown value '" + to_string(v) + "'; valid: " + text_;  // a list of choices
  return "must be " + phrase_ + ", got " + to_string(v);
}

}  // namespace dlsim
