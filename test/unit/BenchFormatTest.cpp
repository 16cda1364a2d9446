//===- BenchFormatTest.cpp - the numbers of nxc jit --bench ---------------===//
//
// Benchee-style spellings: two decimals and the unit after a space. The
// decimals round as printf's "%.2f" does (the exact binary value, ties to
// even).
//
//===----------------------------------------------------------------------===//
#include "BenchFormat.h"

#include <doctest/doctest.h>

using namespace nxc::cli;

TEST_CASE("rates scale to K, M and G from 1000 on") {
  CHECK(benchRate(0.5) == "0.50");
  CHECK(benchRate(999.994) == "999.99");
  CHECK(benchRate(1000) == "1.00 K");
  CHECK(benchRate(56160) == "56.16 K");
  CHECK(benchRate(1e6) == "1.00 M");
  CHECK(benchRate(2.5e6) == "2.50 M");
  CHECK(benchRate(1e9) == "1.00 G");
  CHECK(benchRate(1.5e9) == "1.50 G");
  CHECK(benchRate(1e12) == "1000.00 G");
}

TEST_CASE("durations are in s, ms, \u03bcs or ns") {
  CHECK(benchDuration(120) == "120.00 s");
  CHECK(benchDuration(1.5) == "1.50 s");
  CHECK(benchDuration(1) == "1.00 s");
  CHECK(benchDuration(0.01781) == "17.81 ms");
  CHECK(benchDuration(1e-3) == "1.00 ms");
  CHECK(benchDuration(0.000125) == "125.00 \u03bcs");
  CHECK(benchDuration(17.81e-6) == "17.81 \u03bcs");
  CHECK(benchDuration(1e-6) == "1.00 \u03bcs");
  CHECK(benchDuration(2.345e-7) == "234.50 ns");
  CHECK(benchDuration(5e-9) == "5.00 ns");
  CHECK(benchDuration(0) == "0.00 ns");
}

TEST_CASE("two decimals round ties to even, as printf does") {
  CHECK(benchRate(0.125) == "0.12");
  CHECK(benchRate(0.375) == "0.38");
  CHECK(benchRate(12125) == "12.12 K");
  CHECK(benchDuration(0.625) == "625.00 ms");
  CHECK(benchDuration(2.675) == "2.67 s"); // 2.67499999999999982236431605997495353221893310546875
}

TEST_CASE("the deviation is a percentage of the mean") {
  CHECK(benchDeviation(2.0, 0.0642) == "\u00b13.21%");
  CHECK(benchDeviation(1e-6, 1e-6) == "\u00b1100.00%");
  CHECK(benchDeviation(1.0, 0.0) == "\u00b10.00%");
  CHECK(benchDeviation(0.0, 1.0) == "\u00b10.00%"); // no runs measured
}

TEST_CASE("table rows: the name left-aligned, the numbers right-aligned") {
  // Widths count characters, not bytes: "\u03bc" and "\u00b1" take one column each.
  CHECK(benchRow(8, "Name", "ips", "average", "deviation", "median", "99th %") ==
        "Name            ips        average  deviation         median         99th %\n");
  CHECK(benchRow(8, "f(x)", "56.16 K", "17.81 \u03bcs", "\u00b13.21%", "17.50 \u03bcs", "25.02 \u03bcs") ==
        "f(x)        56.16 K       17.81 \u03bcs     \u00b13.21%       17.50 \u03bcs       25.02 \u03bcs\n");
  // Nothing is cut: a long name or number only pushes the rest right.
  CHECK(benchRow(4, "softmax", "1000.00 G", "120.00 s", "\u00b1100.00%", "1.00 s", "1.00 s") ==
        "softmax  1000.00 G       120.00 s   \u00b1100.00%         1.00 s         1.00 s\n");
}
