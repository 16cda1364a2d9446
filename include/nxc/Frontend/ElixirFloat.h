//===- ElixirFloat.h - floats as Elixir spells them -------------*- C++ -*-===//
#ifndef NXC_FRONTEND_ELIXIRFLOAT_H
#define NXC_FRONTEND_ELIXIRFLOAT_H

#include <string>

namespace nxc {

/// Erlang's `float_to_binary(X, [short])` (Elixir's Float.to_string/1, what
/// "#{x}" and inspect/1 print): shortest round-trip digits, "0.0001" but
/// "1.0e-5", "100.0" but "1.0e3", "1.234e5", scientific from 2^53 up. NaN and
/// infinities print as Nx prints them ("NaN", "Inf", "-Inf"), as Erlang has
/// no such floats.
std::string erlangShortDouble(double x);

} // namespace nxc

#endif // NXC_FRONTEND_ELIXIRFLOAT_H
