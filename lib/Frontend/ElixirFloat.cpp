//===- ElixirFloat.cpp - floats as Elixir spells them ---------------------===//
#include "nxc/Frontend/ElixirFloat.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace nxc {

std::string erlangShortDouble(double x) {
  if (x != x) return "NaN";
  if (x == HUGE_VAL) return "Inf";
  if (x == -HUGE_VAL) return "-Inf";
  bool sign = std::signbit(x);
  if (x == 0) return sign ? "-0.0" : "0.0";

  // Shortest round-trip digits: "d.ddde[+-]XX".
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, sign ? -x : x, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  size_t ePos = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < ePos; ++i)
    if (sci[i] != '.') digits += sci[i];
  int sciExp = std::atoi(sci.c_str() + ePos + 1);
  // to_chars gives no trailing zeros in the shortest form; keep it that way.
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  uint64_t output = std::strtoull(digits.c_str(), nullptr, 10);
  int32_t olength = (int32_t)digits.size();
  int32_t ryuExp = sciExp - olength + 1;

  // erts/emulator/ryu/to_chars.h: the switch between fixed and scientific.
  int32_t lower, upper;
  if (olength == 1) {
    lower = -4; // 1.0e-4 -> "0.0001", 1.0e-5 -> "1.0e-5"
    upper = 2;  // 100.0 -> "100.0", 1.0e3 -> "1.0e3"
  } else if (sciExp >= 10) {
    lower = -(olength + 2);
    upper = 2;
  } else {
    lower = -(olength + 2);
    upper = 1;
  }
  bool fixed = lower <= ryuExp && ryuExp <= upper;
  if (fixed && ((output >= (1ull << 53) && ryuExp == 0) || (output > ((1ull << 52) / 5) && ryuExp == 1) ||
                (output > ((1ull << 51) / 25) && ryuExp == 2)))
    fixed = false; // |x| >= 2^53 prints in scientific notation

  std::string out = sign ? "-" : "";
  if (fixed) {
    int32_t whole = olength + ryuExp;
    if (ryuExp >= 0) out += digits + std::string((size_t)ryuExp, '0') + ".0";
    else if (whole > 0) out += digits.substr(0, (size_t)whole) + "." + digits.substr((size_t)whole);
    else out += "0." + std::string((size_t)-whole, '0') + digits;
    return out;
  }
  out += digits.substr(0, 1) + "." + (olength > 1 ? digits.substr(1) : "0") + "e" + fmt::to_string(sciExp);
  return out;
}

} // namespace nxc
