// Builds the Halide peers ahead of time (Halide 14, Debian's libhalide14-0-dev):
// a 1-D softmax and a layer norm over the last axis, scheduled the usual way
// (exp stored once; reductions vectorized through rfactor; a serial and a
// parallel variant of each), written as static libraries and headers into
// the directory given.
//   halide_gen OUTDIR
#include "Halide.h"

#include <cstdio>

#include <string>

using namespace Halide;

namespace {

// sum/max over x(r) for r in [0, n), vectorized 16 wide through rfactor.
Func vectorReduce(const std::string &name, Func f, Expr n, bool isMax, std::vector<Var> outer = {}) {
  Func acc(name);
  RDom r(0, n / 16 * 16);
  RDom tail(n / 16 * 16, n - n / 16 * 16);
  std::vector<Expr> args(outer.begin(), outer.end());
  auto at = [&](Expr i) {
    std::vector<Expr> a = {i};
    a.insert(a.end(), args.begin(), args.end());
    return f(a);
  };
  acc(outer) = isMax ? Expr(-std::numeric_limits<float>::infinity()) : Expr(0.0f);
  acc(outer) = isMax ? max(acc(outer), at(r)) : acc(outer) + at(r);
  acc(outer) = isMax ? max(acc(outer), at(tail)) : acc(outer) + at(tail);
  RVar ro, ri;
  Var v("v");
  Func lanes = acc.update(0).split(r.x, ro, ri, 16).rfactor(ri, v);
  lanes.compute_at(acc, outer.empty() ? Var::outermost() : outer[0]).vectorize(v).update().vectorize(v);
  acc.update(1).unscheduled(); // the tail, fewer than 16 elements
  return acc;
}

/// `divide`: y = e / s, the division Nx's softmax has (correctly rounded),
/// instead of the usual schedule's multiplication by 1 / s.
void softmax(const std::string &out, const std::string &name, const Target &t, bool parallel, bool divide = false) {
  ImageParam x(Float(32), 1, "x");
  Var i("i");
  Func in("in");
  in(i) = x(i);
  Func mx = vectorReduce("mx", in, x.width(), true);
  Func e("e");
  e(i) = exp(x(i) - mx());
  Func s = vectorReduce("s", e, x.width(), false);
  Func y("softmax");
  if (divide)
    y(i) = e(i) / s();
  else
    y(i) = e(i) * (1.0f / s());
  mx.compute_root();
  s.compute_root();
  Var io("io"), ii("ii");
  if (parallel) {
    e.compute_root().split(i, io, ii, 65536, TailStrategy::GuardWithIf).parallel(io).vectorize(ii, 16);
    y.split(i, io, ii, 65536, TailStrategy::GuardWithIf).parallel(io).vectorize(ii, 16);
  } else {
    e.compute_root().vectorize(i, 16);
    y.vectorize(i, 16);
  }
  y.compile_to_static_library(out + "/" + name, {x}, name, t);
}

void layerNorm(const std::string &out, const std::string &name, const Target &t, bool parallel) {
  ImageParam x(Float(32), 2, "x"); // x(feature, row)
  Var c("c"), row("row");
  Func in("in");
  in(c, row) = x(c, row);
  Expr n = x.width();
  Func sum1 = vectorReduce("sum1", in, n, false, {row});
  Func mean("mean");
  mean(row) = sum1(row) / cast<float>(n);
  Func centered("centered");
  centered(c, row) = x(c, row) - mean(row);
  Func sq("sq");
  sq(c, row) = centered(c, row) * centered(c, row);
  Func sum2 = vectorReduce("sum2", sq, n, false, {row});
  Func y("layer_norm");
  y(c, row) = centered(c, row) / sqrt(sum2(row) / cast<float>(n) + 1e-5f);
  mean.compute_at(y, row);
  sum1.compute_at(y, row);
  sum2.compute_at(y, row);
  y.vectorize(c, 16);
  if (parallel) y.parallel(row, 64);
  y.compile_to_static_library(out + "/" + name, {x}, name, t);
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  std::string out = argv[1];
  Target t = get_host_target();
  // Serial schedules for the 1-thread run (a parallel loop costs a thread
  // pool wake-up per call), parallel ones for 2 threads.
  softmax(out, "halide_softmax", t, false);
  Target rest = t.with_feature(Target::NoRuntime);
  softmax(out, "halide_softmax_par", rest, true);
  softmax(out, "halide_softmax_div", rest, false, true);
  layerNorm(out, "halide_layer_norm", rest, false);
  layerNorm(out, "halide_layer_norm_par", rest, true);
  std::printf("Halide target: %s\n", t.to_string().c_str());
  return 0;
}
