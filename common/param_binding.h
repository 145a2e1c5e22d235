#pragma once
// A parameter declared once, bound to the member of the options struct it sets, as ns-3 binds an attribute to a
// member (AddAttribute(name, help, default, MakeXAccessor(&C::m_x), MakeXChecker(min, max))). One declaration
// holds the name, the member, the valid values (ParamCheck), the meaning and, where the member's unit differs
// from the parameter's, the conversion; the default is the member's initialiser, written once in the struct:
//
//   struct CnmemOptions {
//     uint64_t init_size_bytes = 0;  // the default, in the member's unit
//     static const ParamBindings<CnmemOptions>& parameters();
//   };
//   const ParamBindings<CnmemOptions>& CnmemOptions::parameters() {
//     static const auto b = ParamBindings<CnmemOptions>()
//         .add("init_size_mb", &CnmemOptions::init_size_bytes, mebibytes(), "MiB reserved up front",
//              ParamCheck::in_range(0, kMaxMebibytes));
//     return b;
//   }
//
// From it come the ParamSpecs that the registries, the YAML readers, --param and `dlsim list` read (the default
// converted back to the parameter's unit: init_size_mb 0) and from_params, which sets every bound member of a
// default-constructed struct from checked Params. A default that its own check rejects, or that the parameter's
// unit cannot express (1.5 MiB in bytes), is a programming error: std::logic_error when the bindings are built,
// i.e. on the registry's first use.
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/params.h"

namespace dlsim {

// A parameter's value P (int64_t, double, bool or std::string) to a member's M and back.
template <class M, class P>
struct ParamConversion {
  std::function<M(const P&)> to_member;
  std::function<P(const M&)> to_param;  // for the default: `dlsim list` shows it in the parameter's unit
};

ParamConversion<uint64_t, int64_t> mebibytes();                    // MiB -> bytes
ParamConversion<uint64_t, int64_t> mebibytes_zero_unlimited();     // the same, 0 -> UINT64_MAX ("no limit")
ParamConversion<int64_t, double> microseconds_to_ns();              // µs -> whole ns (rounded)
ParamConversion<double, int64_t> integer_as_double();               // an Int parameter kept as a double

// The names a string parameter accepts and the member value each stands for, in the order listings show them.
template <class M>
using ParamChoices = std::vector<std::pair<std::string, M>>;

namespace param_binding_detail {
template <class P> constexpr ParamType type_of();
template <> constexpr ParamType type_of<int64_t>() { return ParamType::Int; }
template <> constexpr ParamType type_of<double>() { return ParamType::Double; }
template <> constexpr ParamType type_of<bool>() { return ParamType::Bool; }
template <> constexpr ParamType type_of<std::string>() { return ParamType::String; }

template <class P> P read(const Params& p, const std::string& name) {
  if constexpr (std::is_same_v<P, int64_t>) return p.get_int(name);
  else if constexpr (std::is_same_v<P, double>) return p.get_double(name);  // an Int value converts, as before
  else if constexpr (std::is_same_v<P, bool>) return p.get_bool(name);
  else return p.get_string(name);
}

// The parameter type of a member taken as it is: bool, any integer (Int), any floating point (Double), string.
template <class M> auto plain_param() {
  if constexpr (std::is_same_v<M, bool>) return bool{};
  else if constexpr (std::is_integral_v<M>) return int64_t{};
  else if constexpr (std::is_floating_point_v<M>) return double{};
  else {
    static_assert(std::is_same_v<M, std::string>, "bind an enum with add_choice, another type with a conversion");
    return std::string{};
  }
}
}  // namespace param_binding_detail

template <class O>
class ParamBindings {
 public:
  // `member` is a pointer to a data member of O, or a function of O& (and const O&) returning a reference to
  // the member, e.g. [](auto& o) -> auto& { return o.pattern.min_length; } for a member of a member.

  // A parameter that sets `member` as it is (an integer member takes an Int parameter, and so on).
  template <class Member>
  ParamBindings& add(std::string name, Member member, std::string description, ParamCheck check = {}) {
    using M = member_type<Member>;
    using P = decltype(param_binding_detail::plain_param<M>());
    return add(std::move(name), member,
               ParamConversion<M, P>{[](const P& v) { return static_cast<M>(v); },
                                     [](const M& m) { return static_cast<P>(m); }},
               std::move(description), std::move(check));
  }

  // A parameter in another unit than its member's (init_size_mb setting init_size_bytes).
  template <class Member, class M, class P>
  ParamBindings& add(std::string name, Member member, ParamConversion<M, P> conv, std::string description,
                     ParamCheck check = {}) {
    static_assert(std::is_same_v<M, member_type<Member>>, "the conversion's member type is not the member's");
    Binding b;
    b.spec = {name, param_binding_detail::type_of<P>(), {}, std::move(description), std::move(check)};
    b.set = [name, member, to = conv.to_member](O& o, const Params& p) {
      std::invoke(member, o) = to(param_binding_detail::read<P>(p, name));
    };
    b.get = [name, member, conv](const O& o) -> ParamValue {
      const M& m = std::invoke(member, o);
      P v = conv.to_param(m);
      if (!(conv.to_member(v) == m))
        throw std::logic_error("parameter '" + name + "': the member's value has no exact value in its unit");
      return v;
    };
    return push(std::move(b));
  }

  // A string parameter naming one of `choices`; its valid values are their names.
  template <class Member, class M>
  ParamBindings& add_choice(std::string name, Member member, ParamChoices<M> choices, std::string description) {
    std::vector<std::string> names;
    for (const auto& c : choices) names.push_back(c.first);
    ParamConversion<M, std::string> conv{
        [name, choices](const std::string& s) {
          for (const auto& c : choices)
            if (c.first == s) return c.second;
          throw std::logic_error("parameter '" + name + "': unchecked value '" + s + "'");
        },
        [name, choices](const M& m) {
          for (const auto& c : choices)
            if (c.second == m) return c.first;
          throw std::logic_error("parameter '" + name + "': the member's value has no name");
        }};
    return add(std::move(name), member, std::move(conv), std::move(description), ParamCheck::one_of(names));
  }

  // Every parameter of `part`, a member of O with bindings of its own (MemoryLimit), in its order; the
  // defaults are those of O's member.
  template <class Member, class M>
  ParamBindings& add_all(Member member, const ParamBindings<M>& part) {
    static_assert(std::is_same_v<M, member_type<Member>>, "the part's bindings are not for the member's type");
    for (const auto& pb : part.bindings_) {
      Binding b;
      b.spec = pb.spec;
      b.set = [member, set = pb.set](O& o, const Params& p) { set(std::invoke(member, o), p); };
      b.get = [member, get = pb.get](const O& o) { return get(std::invoke(member, o)); };
      push(std::move(b));
    }
    for (const auto& r : part.rules_) rules_.push_back([member, r](const O& o) { r(std::invoke(member, o)); });
    return *this;
  }
  // Every parameter of `more`, bindings of the same struct (a parameter several structs declare alike).
  ParamBindings& add_all(const ParamBindings& more) {
    for (const auto& b : more.bindings_) push(b);
    for (const auto& r : more.rules_) rules_.push_back(r);
    return *this;
  }

  // A rule between parameters that no single check can state; from_params applies it after the conversion,
  // and it throws ConfigError naming the key.
  ParamBindings& rule(std::function<void(const O&)> r) {
    rules_.push_back(std::move(r));
    return *this;
  }

  // The declarations, in order, with their defaults in the parameters' units.
  const std::vector<ParamSpec>& specs() const { return specs_; }

  // A default-constructed O with every bound member set from `p`, which holds every parameter of specs(),
  // checked (the registries and readers check them).
  O from_params(const Params& p) const {
    O o{};
    for (const auto& b : bindings_) b.set(o, p);
    for (const auto& r : rules_) r(o);
    return o;
  }

 private:
  template <class Member>
  using member_type = std::remove_cvref_t<std::invoke_result_t<Member, O&>>;
  template <class>
  friend class ParamBindings;

  struct Binding {
    ParamSpec spec;
    std::function<void(O&, const Params&)> set;
    std::function<ParamValue(const O&)> get;
  };

  ParamBindings& push(Binding b) {
    b.spec.default_value = b.get(O{});
    if (auto why = b.spec.check.violation(b.spec.default_value))
      throw std::logic_error("parameter '" + b.spec.name + "': its default " + *why);
    specs_.push_back(b.spec);
    bindings_.push_back(std::move(b));
    return *this;
  }

  std::vector<ParamSpec> specs_;  // bindings_[i].spec, kept apart for specs()
  std::vector<Binding> bindings_;
  std::vector<std::function<void(const O&)>> rules_;
};

}  // namespace dlsim
