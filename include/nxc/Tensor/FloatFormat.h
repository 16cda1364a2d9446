//===- FloatFormat.h - floats spelled as Nx prints them ----------*- C++ -*-===//
//
// Nx prints tensor elements with Nx.Backend.inspect/3 (nx/lib/nx/backend.ex,
// float_to_string/3): f64 through Elixir's Float.to_string/1, i.e. Erlang's
// `float_to_binary(X, [short])`; f32, f16, bf16 and the f8 types through Nx.Ryu.
// bits_to_decimal/3 (nx/lib/nx/ryu.ex), the shortest decimal that reads back
// as the same value *of that type* ("0.1" for f32 0.1, not 0.10000000149...).
// Non-finite values are "NaN", "Inf" and "-Inf" for every type.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TENSOR_FLOATFORMAT_H
#define NXC_TENSOR_FLOATFORMAT_H

#include "nxc/Frontend/ElixirFloat.h" // erlangShortDouble

#include <cstdint>
#include <string>

namespace nxc {

/// Nx.Ryu.bits_to_decimal(bits, mantissaBits, exponentBits), a literal port
/// (for f32: 23, 8; f16: 10, 5; bf16: 7, 8). It uses Erlang's decimal/
/// scientific switch but prints one-digit scientific mantissas without ".0"
/// ("1e20", "6e-8"), as Nx.Ryu does.
/// With `finiteOnly` (Nx.Ryu's `:fn` modifier, f8_e4m3fn), the largest
/// exponent holds finite values and only an all-ones mantissa is NaN.
std::string nxRyuBitsToDecimal(uint64_t bits, int mantissaBits, int exponentBits, bool finiteOnly = false);

/// The spelling of one f8 (E5M2: Nx.Ryu with 2, 5) or f8_e4m3fn (3, 4, :fn)
/// element given its byte.
std::string nxF8String(uint64_t bits, bool e4m3fn);

/// The spelling of one element of type f32/f16/bf16/f64 given its raw bits.
std::string nxFloatString(uint64_t bits, int typeBits, bool isBf16);

} // namespace nxc

#endif // NXC_TENSOR_FLOATFORMAT_H
