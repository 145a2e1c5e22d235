#include "experiment/snapshot/pickle_writer.h"

#include <bit>
#include <cstdint>
#include <cstring>

namespace dlsim {

namespace {

// Opcodes of pickle protocol 2 (Python's Lib/pickletools.py documents each).
constexpr char kProto = '\x80';
constexpr char kStop = '.';
constexpr char kNone = 'N';
constexpr char kTrue = '\x88';
constexpr char kFalse = '\x89';
constexpr char kBinInt = 'J';    // 4-byte signed little-endian
constexpr char kBinInt1 = 'K';   // 1-byte unsigned
constexpr char kBinInt2 = 'M';   // 2-byte unsigned little-endian
constexpr char kLong1 = '\x8a';  // length byte, then little-endian two's complement
constexpr char kBinFloat = 'G';  // 8-byte big-endian IEEE 754
constexpr char kBinUnicode = 'X';  // 4-byte little-endian length, then UTF-8
constexpr char kEmptyDict = '}';
constexpr char kEmptyList = ']';
constexpr char kMark = '(';
constexpr char kSetItems = 'u';
constexpr char kAppends = 'e';

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// LONG1 holds the minimal two's-complement bytes, so that 255 is 0xff 0x00 (positive), not 0xff (-1).
void put_long(std::string& out, bool negative, uint64_t magnitude_or_bits) {
  std::string bytes;
  uint64_t v = magnitude_or_bits;  // the value's 64-bit two's-complement bits
  for (int i = 0; i < 8; ++i) bytes += static_cast<char>((v >> (8 * i)) & 0xff);
  if (!negative) bytes += '\0';  // room for a clear sign bit when the top bit is set (uint64 above 2^63)
  // Drop bytes that only repeat the sign.
  while (bytes.size() > 1) {
    const auto last = static_cast<unsigned char>(bytes.back());
    const auto prev = static_cast<unsigned char>(bytes[bytes.size() - 2]);
    if ((last == 0x00 && !(prev & 0x80)) || (last == 0xff && (prev & 0x80))) bytes.pop_back();
    else break;
  }
  out += kLong1;
  out += static_cast<char>(bytes.size());
  out += bytes;
}

void put_int(std::string& out, int64_t v) {
  if (v >= 0 && v < 256) {
    out += kBinInt1;
    put_le(out, static_cast<uint64_t>(v), 1);
  } else if (v >= 0 && v < 65536) {
    out += kBinInt2;
    put_le(out, static_cast<uint64_t>(v), 2);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    out += kBinInt;
    put_le(out, static_cast<uint32_t>(static_cast<int32_t>(v)), 4);
  } else {
    put_long(out, v < 0, static_cast<uint64_t>(v));
  }
}

void put_str(std::string& out, const std::string& s) {
  out += kBinUnicode;
  put_le(out, s.size(), 4);
  out += s;
}

void put(std::string& out, const nlohmann::json& v) {
  using T = nlohmann::json::value_t;
  switch (v.type()) {
    case T::null:
    case T::discarded:
      out += kNone;
      return;
    case T::boolean:
      out += v.get<bool>() ? kTrue : kFalse;
      return;
    case T::number_integer:
      put_int(out, v.get<int64_t>());
      return;
    case T::number_unsigned: {
      const auto u = v.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) put_int(out, static_cast<int64_t>(u));
      else put_long(out, false, u);
      return;
    }
    case T::number_float: {
      out += kBinFloat;
      const auto bits = std::bit_cast<uint64_t>(v.get<double>());
      for (int i = 7; i >= 0; --i) out += static_cast<char>((bits >> (8 * i)) & 0xff);
      return;
    }
    case T::string:
      put_str(out, v.get_ref<const std::string&>());
      return;
    case T::array:
      out += kEmptyList;
      if (v.empty()) return;
      out += kMark;
      for (const auto& e : v) put(out, e);
      out += kAppends;
      return;
    case T::object:
      out += kEmptyDict;
      if (v.empty()) return;
      out += kMark;
      for (auto it = v.begin(); it != v.end(); ++it) {
        put_str(out, it.key());
        put(out, it.value());
      }
      out += kSetItems;
      return;
    case T::binary:
      break;
  }
  throw std::invalid_argument("to_pickle: binary JSON values have no pickle form here");
}

}  // namespace

std::string to_pickle(const nlohmann::json& v) {
  std::string out;
  out += kProto;
  out += '\x02';
  put(out, v);
  out += kStop;
  return out;
}

}  // namespace dlsim
