//===- BenchFormat.h - the numbers of the --bench table ---------*- C++ -*-===//
//
// Benchee-style spellings: "56.16 K" for rates, "17.81 μs" for times,
// "±3.21%" for the deviation, two decimals each, and the column layout.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TOOLS_BENCHFORMAT_H
#define NXC_TOOLS_BENCHFORMAT_H

#include <fmt/format.h>

#include <string>

namespace nxc::cli {

/// Runs per second, scaled to G, M or K from 1000 on.
inline std::string benchRate(double ips) {
  if (ips >= 1e9) return fmt::format(FMT_STRING("{:.2f} G"), ips / 1e9);
  if (ips >= 1e6) return fmt::format(FMT_STRING("{:.2f} M"), ips / 1e6);
  if (ips >= 1e3) return fmt::format(FMT_STRING("{:.2f} K"), ips / 1e3);
  return fmt::format(FMT_STRING("{:.2f}"), ips);
}

/// A time in seconds, in s, ms, μs or ns.
inline std::string benchDuration(double s) {
  if (s >= 1) return fmt::format(FMT_STRING("{:.2f} s"), s);
  if (s >= 1e-3) return fmt::format(FMT_STRING("{:.2f} ms"), s * 1e3);
  if (s >= 1e-6) return fmt::format(FMT_STRING("{:.2f} \u03bcs"), s * 1e6);
  return fmt::format(FMT_STRING("{:.2f} ns"), s * 1e9);
}

/// The standard deviation as a percentage of the mean.
inline std::string benchDeviation(double mean, double stddev) {
  return fmt::format(FMT_STRING("\u00b1{:.2f}%"), mean > 0 ? stddev / mean * 100 : 0.0);
}

/// One line of the table: the name left-aligned in `nameWidth` columns, the
/// rest right-aligned (widths count code points, so "μs" is two columns).
inline std::string benchRow(size_t nameWidth, const std::string &name, const std::string &ips,
                            const std::string &average, const std::string &deviation, const std::string &median,
                            const std::string &p99) {
  return fmt::format(FMT_STRING("{:<{}}{:>11}{:>15}{:>11}{:>15}{:>15}\n"), name, nameWidth, ips, average, deviation,
                     median, p99);
}

} // namespace nxc::cli

#endif // NXC_TOOLS_BENCHFORMAT_H
