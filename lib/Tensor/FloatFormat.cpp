//===- FloatFormat.cpp - floats spelled as Nx prints them -----------------===//
//
// nxRyuBitsToDecimal follows nx/lib/nx/ryu.ex (Nx.Ryu, added in Nx commit
// c5887a64 "Add Ryu pretty printing for f32/f16/f8/bf16") step by step,
// including its deviations from Ulf Adams' reference Ryu (pow5factor starts
// from value div 5; the final rounding looks at the caller's vm_is_trailing_zero),
// so that nxc prints the very digits Nx prints. erlangShortDouble follows
// erts/emulator/ryu/to_chars.h (float_to_binary(X, [short])), with the digits
// from std::to_chars, which is also shortest-round-trip Ryu.
//
//===----------------------------------------------------------------------===//
#include "nxc/Tensor/FloatFormat.h"

#include "nxc/Tensor/Half.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace nxc {
namespace {

using u128 = unsigned __int128;

/// Nx.Ryu's pow5bits/1.
int64_t pow5bits(int64_t e) { return ((e * 1217359) >> 19) + 1; }

constexpr int kPow5Bitcount = 61;    // @pow5_bitcount
constexpr int kPow5InvBitcount = 59; // @pow5_inv_bitcount

/// Nx.Ryu's table_value/1 (0..47): the top 61 bits of 5^i, and
/// inv_table_value/1 (0..54): floor(2^(pow5bits(i) - 1 + 59) / 5^i) + 1.
/// These are Ryu's f32 tables; they are computed here rather than listed.
struct Pow5Tables {
  std::array<uint64_t, 48> split{};
  std::array<uint64_t, 55> invSplit{};
  Pow5Tables() {
    u128 p = 1;
    for (int i = 0; i < 55; ++i) {
      if (i < 48) {
        int64_t shift = pow5bits(i) - kPow5Bitcount;
        split[i] = (uint64_t)(shift >= 0 ? p >> shift : p << -shift);
      }
      // floor(2^k / p) by binary long division (p < 2^126, quotient < 2^64).
      int64_t k = pow5bits(i) - 1 + kPow5InvBitcount;
      u128 r = 0;
      uint64_t q = 0;
      for (int64_t b = k; b >= 0; --b) {
        r = (r << 1) | (b == k ? 1 : 0); // the dividend 2^k: a one, then k zeros
        q <<= 1;
        if (r >= p) {
          r -= p;
          q |= 1;
        }
      }
      invSplit[i] = q + 1;
      p *= 5;
    }
  }
};

const Pow5Tables &tables() {
  static const Pow5Tables t;
  return t;
}

/// (m * mul) >>> j, with the product in 128 bits (m < 2^27, mul < 2^62).
uint64_t mulShift(uint64_t m, uint64_t mul, int64_t j) {
  assert(j >= 0 && j < 128);
  return (uint64_t)(((u128)m * mul) >> j);
}

/// Nx.Ryu's pow5factor/1, which counts from value div 5.
int64_t pow5factor(uint64_t val) {
  uint64_t v = val / 5;
  int64_t count = 0;
  while (v != 0 && v % 5 == 0) { // v == 0 would loop forever in Nx; it cannot occur
    v /= 5;
    ++count;
  }
  return count;
}

bool multipleOfPowerOf5(uint64_t value, int64_t q) { return pow5factor(value) >= q; }

struct Digits {
  int64_t place; ///< power of ten of the last digit
  std::string digits;
};

/// Nx.Ryu's compute_shortest/6: the decimal digits and the number removed.
std::pair<uint64_t, int64_t> computeShortest(uint64_t vm, uint64_t vr, uint64_t vp, bool vmIsTrailingZero,
                                             bool vrIsTrailingZero, bool accept) {
  int64_t removed = 0;
  if (!vmIsTrailingZero && !vrIsTrailingZero) {
    // general_case/5 and general_case_10/5
    bool roundUp = false;
    if (vp / 100 > vm / 100) {
      roundUp = vr % 100 >= 50;
      vm /= 100;
      vr /= 100;
      vp /= 100;
      removed += 2;
    }
    while (vp / 10 > vm / 10) {
      roundUp = vr % 10 >= 5;
      vm /= 10;
      vr /= 10;
      vp /= 10;
      ++removed;
    }
    // handle_normal_output_mod/3
    return {vr + ((vr == vm || roundUp) ? 1 : 0), removed};
  }
  // handle_trailing_zeros/7
  bool vmTZ = vmIsTrailingZero, vrTZ = vrIsTrailingZero;
  uint64_t last = 0;
  while (vp / 10 > vm / 10) {
    vmTZ = vmTZ && vm % 10 == 0;
    vrTZ = vrTZ && last == 0;
    last = vr % 10;
    vm /= 10;
    vr /= 10;
    vp /= 10;
    ++removed;
  }
  // vm_is_trailing_zero/7
  if (vmTZ) {
    while (vm % 10 == 0) {
      vrTZ = last == 0 && vrTZ;
      last = vr % 10;
      vm /= 10;
      vr /= 10;
      vp /= 10;
      ++removed;
    }
  }
  // handle_50_dotdot_0/5
  if (vrTZ && last == 5 && vr % 2 == 0) last = 4;
  // handle_zero_output_mod/5, given the *original* vm_is_trailing_zero
  uint64_t mod = 0;
  if (last >= 5) mod = 1;
  else if (vr == vm && (!accept || !vmIsTrailingZero)) mod = 1;
  return {vr + mod, removed};
}

/// Nx.Ryu's fwrite_g_1/4.
Digits fwriteG1(uint64_t mantissa, int64_t exponent, int mantissaBits, int64_t bias) {
  const Pow5Tables &tab = tables();
  uint64_t bigPow = 1ull << mantissaBits;
  // decode/4
  uint64_t mf;
  int64_t ef;
  if (exponent == 0) {
    mf = mantissa;
    ef = 1 - bias - mantissaBits - 2;
  } else {
    mf = mantissa + bigPow;
    ef = exponent - bias - mantissaBits - 2;
  }
  uint64_t shift = (mantissa == 0 && exponent > 1) ? 0 : 1; // mmshift/2
  uint64_t mv = 4 * mf;

  // convert_to_decimal/3
  int64_t q, e10;
  uint64_t vm, vr, vp;
  if (ef >= 0) {
    q = std::max<int64_t>(0, ((ef * 78913) >> 18) - 1);
    assert(q < (int64_t)tab.invSplit.size());
    uint64_t mul = tab.invSplit[(size_t)q];
    int64_t k = kPow5InvBitcount + pow5bits(q) - 1;
    int64_t i = -ef + q + k;
    vm = mulShift(mv - 1 - shift, mul, i);
    vr = mulShift(mv, mul, i);
    vp = mulShift(mv + 2, mul, i);
    e10 = q;
  } else {
    q = std::max<int64_t>(0, ((-ef * 732923) >> 20) - 1);
    int64_t i = -ef - q;
    int64_t k = pow5bits(i) - kPow5Bitcount;
    assert(i < (int64_t)tab.split.size());
    uint64_t mul = tab.split[(size_t)i];
    int64_t j = q - k;
    vm = mulShift(mv - 1 - shift, mul, j);
    vr = mulShift(mv, mul, j);
    vp = mulShift(mv + 2, mul, j);
    e10 = ef + q;
  }

  // bounds/6
  bool accept = mantissa % 2 == 0;
  bool vmTZ = false, vrTZ = false;
  if (ef >= 0 && q <= 21) {
    if (mv % 5 == 0) vrTZ = multipleOfPowerOf5(mv, q);
    else if (accept) vmTZ = multipleOfPowerOf5(mv - 1 - shift, q);
    else vp -= multipleOfPowerOf5(mv + 2, q) ? 1 : 0;
  } else if (ef < 0 && q <= 1) {
    vrTZ = true;
    if (accept) vmTZ = shift == 1;
    else vp -= 1;
  } else if (ef < 0 && q < 63) {
    vrTZ = (mv & ((1ull << q) - 1)) == 0;
  }

  auto [output, removed] = computeShortest(vm, vr, vp, vmTZ, vrTZ, accept);
  return {removed + e10, fmt::to_string(output)};
}

/// Nx.Ryu's insert_exp/2: no ".0" after a single digit.
std::string insertExpNx(const std::string &expL, const std::string &s) {
  if (s.size() == 1) return s + "e" + expL;
  return s.substr(0, 1) + "." + s.substr(1) + "e" + expL;
}

/// Nx.Ryu's insert_decimal/5.
std::string insertDecimalNx(int64_t place, const std::string &s) {
  int64_t l = (int64_t)s.size();
  int64_t exp = place + l - 1;
  std::string expL = fmt::to_string(exp);
  int64_t expCost = (int64_t)expL.size() + 2;
  if (place < 0) {
    if (exp >= 0) {
      int64_t split = l + place;
      if (split > 0 && split < l) return s.substr(0, (size_t)split) + "." + s.substr((size_t)split);
      return insertExpNx(expL, s);
    }
    if (2 - place - l <= expCost) return "0." + std::string((size_t)(-place - l), '0') + s;
    return insertExpNx(expL, s);
  }
  int64_t dot = l == 1 ? 1 : 0;
  if (expCost + dot >= place + 2) return s + std::string((size_t)place, '0') + ".0";
  return insertExpNx(expL, s);
}

} // namespace

std::string nxRyuBitsToDecimal(uint64_t bits, int mantissaBits, int exponentBits, bool finiteOnly) {
  // decode_ieee754/3
  uint64_t sign = (bits >> (mantissaBits + exponentBits)) & 1;
  int64_t exponent = (int64_t)((bits >> mantissaBits) & ((1ull << exponentBits) - 1));
  uint64_t mantissa = bits & ((1ull << mantissaBits) - 1);
  int64_t bias = (1ll << (exponentBits - 1)) - 1;
  int64_t maxExponent = (1ll << exponentBits) - 1;

  if (exponent == 0 && mantissa == 0) return sign ? "-0.0" : "0.0";
  if (exponent == maxExponent && finiteOnly) {
    if (mantissa == (1ull << mantissaBits) - 1) return "NaN";
  } else if (exponent == maxExponent) {
    return mantissa != 0 ? "NaN" : sign ? "-Inf" : "Inf";
  }

  // normal_number/6: check_small_int/4, then compute_shortest_int/2 or fwrite_g_1/4
  Digits d;
  uint64_t m2 = (1ull << mantissaBits) | mantissa;
  int64_t e2 = exponent - (bias + mantissaBits);
  bool isInt = false;
  if (!(e2 > 0 || e2 < -mantissaBits)) {
    uint64_t mask = (1ull << -e2) - 1;
    if ((m2 & mask) == 0) {
      uint64_t m = m2 >> -e2;
      int64_t e = 0;
      while (m % 10 == 0) {
        m /= 10;
        ++e;
      }
      d = {e, fmt::to_string(m)};
      isInt = true;
    }
  }
  if (!isInt) d = fwriteG1(mantissa, exponent, mantissaBits, bias);
  std::string s = insertDecimalNx(d.place, d.digits);
  return sign ? "-" + s : s;
}

std::string nxF8String(uint64_t bits, bool e4m3fn) {
  return e4m3fn ? nxRyuBitsToDecimal(bits & 0xFF, 3, 4, /*finiteOnly=*/true) : nxRyuBitsToDecimal(bits & 0xFF, 2, 5);
}

std::string nxFloatString(uint64_t bits, int typeBits, bool isBf16) {
  if (isBf16) return nxRyuBitsToDecimal(bits & 0xFFFF, 7, 8);
  switch (typeBits) {
  case 16: return nxRyuBitsToDecimal(bits & 0xFFFF, 10, 5);
  case 32: return nxRyuBitsToDecimal(bits & 0xFFFFFFFFu, 23, 8);
  default: return erlangShortDouble(doubleFromBits(bits));
  }
}

} // namespace nxc
