#include "common/param_check.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "common/strings.h"

namespace dlsim {

namespace {

// The shortest text that reads back as the same double (std::to_chars): 20, 0.5, 1e+09, 1073741824. "%g" kept
// six digits, so a limit of 2^30 printed as 1.07374e+09 and a value beside it could not be told apart.
std::string number_text(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// "[0, 1]", "(0, 1e+09]". Appended piece by piece: GCC 12 warns falsely (-Wrestrict, bug 105329) on the
// chain of operator+ once number_text is inlined.
std::string interval(char open, double lo, double hi, char close) {
  std::string t(1, open);
  t += number_text(lo);
  t += ", ";
  t += number_text(hi);
  t += close;
  return t;
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
  ParamCheck c = numeric([lo](double x) { return x >= lo; }, t, t);
  c.lo_ = lo;
  return c;
}

ParamCheck ParamCheck::greater_than(double lo) {
  const std::string t = "> " + number_text(lo);
  ParamCheck c = numeric([lo](double x) { return x > lo; }, t, t);
  c.lo_ = lo;
  return c;
}

ParamCheck ParamCheck::in_range(double lo, double hi) {
  const std::string t = interval('[', lo, hi, ']');
  ParamCheck c = numeric([lo, hi](double x) { return x >= lo && x <= hi; }, t, "in " + t);
  c.lo_ = lo;
  c.hi_ = hi;
  return c;
}

ParamCheck ParamCheck::above_up_to(double lo, double hi) {
  const std::string t = interval('(', lo, hi, ']');
  ParamCheck c = numeric([lo, hi](double x) { return x > lo && x <= hi; }, t, "in " + t);
  c.lo_ = lo;
  c.hi_ = hi;
  return c;
}

ParamCheck ParamCheck::between(double lo, double hi) {
  const std::string t = interval('(', lo, hi, ')');
  ParamCheck c = numeric([lo, hi](double x) { return x > lo && x < hi; }, t, "in " + t);
  c.lo_ = lo;
  c.hi_ = hi;
  return c;
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
  std::vector<std::string> kept = choices;
  ParamCheck c(
      [choices = std::move(choices)](const ParamValue& v) {
        const auto* s = std::get_if<std::string>(&v);
        if (!s) return false;
        for (const auto& c : choices)
          if (c == *s) return true;
        return false;
      },
      std::move(text), "");
  c.choices_ = std::move(kept);
  return c;
}

ParamCheck ParamCheck::string_where(std::function<bool(const std::string&)> test, std::string text) {
  std::string phrase = text;
  return ParamCheck(
      [test = std::move(test)](const ParamValue& v) {
        const auto* s = std::get_if<std::string>(&v);
        return s && test(*s);
      },
      std::move(text), std::move(phrase));
}

ParamCheck ParamCheck::zero_or(const ParamCheck& other) {
  ParamCheck c(
      [test = other.test_](const ParamValue& v) {
        const auto x = as_number(v);
        return (x && *x == 0) || !test || test(v);
      },
      "0 or " + other.text_, "0 or " + other.phrase_);
  c.lo_ = other.lo_;
  c.hi_ = other.hi_;
  c.zero_ok_ = true;
  return c;
}

std::optional<std::string> ParamCheck::violation(const ParamValue& v) const {
  if (!test_ || test_(v)) return std::nullopt;
  if (phrase_.empty()) return "unknown value '" + to_string(v) + "'; valid: " + text_;  // a list of choices
  return "must be " + phrase_ + ", got " + to_string(v);
}

}  // namespace dlsim
