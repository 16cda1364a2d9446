// The workloads W1-W7 side by side in one run: nxc's generated code against
// the libraries users would otherwise pick (Debian's Eigen 3.4, oneDNN 2.6 and
// Halide 14 AOT), same inputs, every result checked against a float64
// reference. Median microseconds per call; the thread count (1 or 2) applies
// to nxc (its modules are compiled with --threads 2; MODULE_set_threads picks
// the count) and to the peers (Eigen's products, oneDNN's OpenMP, Halide's
// thread pool).
//   peers THREADS
#include "HalideBuffer.h"
#include "HalideRuntime.h"
#include "halide_layer_norm.h"
#include "halide_layer_norm_par.h"
#include "halide_softmax.h"
#include "halide_softmax_div.h"
#include "halide_softmax_par.h"

#include "pbln.h"
#include "pbmm.h"
#include "pbmnist.h"
#include "pbsm.h"

#include <Eigen/Dense>
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapM = Eigen::Map<RowMatrix>;
using MapCM = Eigen::Map<const RowMatrix>;
using MapV = Eigen::Map<Eigen::ArrayXf>;
using MapCV = Eigen::Map<const Eigen::ArrayXf>;

/// At 2 threads Halide's parallel schedules run beside its serial ones (on a
/// shared VM a thread-pool wake-up can cost more than a small loop); the
/// table shows the faster.
bool parallelPeers = false;

/// Calls per timed round: enough to take about 2 ms.
int callsPerRound(const std::function<void()> &f) {
  f();
  auto t0 = Clock::now();
  f();
  double once = std::chrono::duration<double>(Clock::now() - t0).count();
  return std::max(1, (int)(2e-3 / std::max(once, 1e-9)));
}

/// Median seconds per call of each contender over 15 rounds of about 2 ms.
/// At one thread the rounds take turns (nxc, then each peer, then nxc
/// again...): on a shared machine a noisy minute then slows every contender
/// alike instead of whichever ran in it. With threads, each contender's
/// rounds run back to back, after a pause: a thread pool is measured warm,
/// as a program calling it in a loop runs it (after an idle pause a pool's
/// sleeping workers wake slowly on this VM, for every library), and the
/// contender before may leave its workers spinning (OpenMP's and Halide's
/// do, for a while), which would take the cores this one's threads need.
std::vector<double> medianRounds(const std::vector<std::function<void()>> &fs, bool threaded) {
  std::vector<int> reps;
  for (auto &f : fs) reps.push_back(callsPerRound(f));
  std::vector<std::vector<double>> t(fs.size());
  auto round = [&](size_t c) {
    fs[c](); // warm this contender's data and code after the others ran
    auto s = Clock::now();
    for (int i = 0; i < reps[c]; ++i) fs[c]();
    t[c].push_back(std::chrono::duration<double>(Clock::now() - s).count() / reps[c]);
  };
  if (threaded) {
    for (size_t c = 0; c < fs.size(); ++c) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      // Wake the pool's workers: on a VM an idle virtual CPU can take
      // milliseconds to be scheduled again.
      for (auto w = Clock::now(); std::chrono::duration<double>(Clock::now() - w).count() < 0.05;) fs[c]();
      for (int r = 0; r < 15; ++r) round(c);
    }
  } else {
    for (int r = 0; r < 15; ++r)
      for (size_t c = 0; c < fs.size(); ++c) round(c);
  }
  std::vector<double> medians;
  for (auto &ts : t) {
    std::sort(ts.begin(), ts.end());
    medians.push_back(ts[ts.size() / 2]);
  }
  return medians;
}

/// Every tensor, for every library, starts a cache line (64 bytes), as
/// oneDNN recommends and as std::vector's malloc does not guarantee beyond
/// 16 bytes; nxc writes large aligned outputs with streaming stores.
template <typename T> struct LineAligned {
  using value_type = T;
  LineAligned() = default;
  template <typename U> LineAligned(const LineAligned<U> &) {}
  T *allocate(size_t n) { return static_cast<T *>(std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64)); }
  void deallocate(T *p, size_t) { std::free(p); }
  template <typename U> bool operator==(const LineAligned<U> &) const { return true; }
  template <typename U> bool operator!=(const LineAligned<U> &) const { return false; }
};
using Floats = std::vector<float, LineAligned<float>>;

Floats uniform(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  Floats v(n);
  for (auto &x : v) x = d(g);
  return v;
}

/// Largest error relative to the reference's largest magnitude.
double relErr(const float *got, const std::vector<double> &ref) {
  double m = 0, e = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    m = std::max(m, std::fabs(ref[i]));
    e = std::max(e, std::fabs(got[i] - ref[i]));
  }
  return e / std::max(m, 1e-30);
}

struct Row {
  std::string what;
  std::vector<std::pair<std::string, double>> times; // first: nxc
  double worstErr = 0;
  /// Checked contenders waiting to be timed together (measure()).
  std::vector<std::pair<std::string, std::function<void()>>> contenders;

  void enter(const char *who, std::function<void()> f) { contenders.push_back({who, std::move(f)}); }
  void measure() {
    std::vector<std::function<void()>> fs;
    for (auto &c : contenders) fs.push_back(c.second);
    auto medians = medianRounds(fs, parallelPeers);
    for (size_t i = 0; i < contenders.size(); ++i) times.push_back({contenders[i].first, medians[i]});
    contenders.clear();
  }
};
std::vector<Row> rows;
/// Halide's softmax dividing as Nx does (y = e / s), beside nxc: not in the
/// table, whose Halide multiplies by 1 / s like Eigen.
std::vector<std::pair<std::string, std::pair<double, double>>> dividingSoftmax;

/// Times the row's contenders (if not yet) and keeps it for the table.
void record(Row r) {
  if (!r.contenders.empty()) r.measure();
  rows.push_back(std::move(r));
}

void check(double err, Row &row, const char *who) {
  row.worstErr = std::max(row.worstErr, err);
  if (err > 1e-3) std::fprintf(stderr, "%s: %s is off by %.2g (relative)\n", row.what.c_str(), who, err);
}

// ---- float64 references -----------------------------------------------------
std::vector<double> softmaxRef(const float *x, size_t n) {
  double m = -INFINITY, s = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, (double)x[i]);
  std::vector<double> y(n);
  for (size_t i = 0; i < n; ++i) s += y[i] = std::exp(x[i] - m);
  for (auto &v : y) v /= s;
  return y;
}

std::vector<double> matmulRef(const float *a, const float *b, int m, int k, int n) {
  std::vector<double> c((size_t)m * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p)
      for (int j = 0; j < n; ++j) c[(size_t)i * n + j] += (double)a[(size_t)i * k + p] * b[(size_t)p * n + j];
  return c;
}

struct Mlp {
  Floats w1 = uniform(784 * 128, -0.1f, 0.1f, 1), b1 = uniform(128, -0.1f, 0.1f, 2),
                     w2 = uniform(128 * 10, -0.1f, 0.1f, 3), b2 = uniform(10, -0.1f, 0.1f, 4);
};

std::vector<double> predictRef(const Mlp &p, const float *x, int batch) {
  std::vector<double> h((size_t)batch * 128), y((size_t)batch * 10);
  for (int i = 0; i < batch; ++i) {
    for (int j = 0; j < 128; ++j) {
      double s = p.b1[j];
      for (int k = 0; k < 784; ++k) s += (double)x[i * 784 + k] * p.w1[k * 128 + j];
      h[i * 128 + j] = 1 / (1 + std::exp(-s));
    }
    double m = -INFINITY, sum = 0;
    for (int j = 0; j < 10; ++j) {
      double s = p.b2[j];
      for (int k = 0; k < 128; ++k) s += h[i * 128 + k] * p.w2[k * 10 + j];
      y[i * 10 + j] = s;
      m = std::max(m, s);
    }
    for (int j = 0; j < 10; ++j) sum += y[i * 10 + j] = std::exp(y[i * 10 + j] - m);
    for (int j = 0; j < 10; ++j) y[i * 10 + j] /= sum;
  }
  return y;
}

// ---- oneDNN helpers -----------------------------------------------------------
dnnl::engine eng(dnnl::engine::kind::cpu, 0);
dnnl::stream strm(eng);
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dnnl::memory mem(const dnnl::memory::dims &d, const float *p) {
  return dnnl::memory({d, dt::f32, d.size() == 1 ? tag::a : tag::ab}, eng, const_cast<float *>(p));
}

struct DnnlMatmul {
  dnnl::matmul prim;
  dnnl::memory a, b, bias, c;
  bool hasBias;
  DnnlMatmul(int m, int k, int n, const float *pa, const float *pb, const float *pbias, float *pc, bool logistic) {
    dnnl::memory::desc amd({m, k}, dt::f32, tag::ab), bmd({k, n}, dt::f32, tag::ab), cmd({m, n}, dt::f32, tag::ab),
        biasmd({1, n}, dt::f32, tag::ab);
    dnnl::primitive_attr attr;
    if (logistic) {
      dnnl::post_ops po;
      po.append_eltwise(1.f, dnnl::algorithm::eltwise_logistic, 0.f, 0.f);
      attr.set_post_ops(po);
    }
    hasBias = pbias != nullptr;
    auto d = hasBias ? dnnl::matmul::desc(amd, bmd, biasmd, cmd) : dnnl::matmul::desc(amd, bmd, cmd);
    prim = dnnl::matmul(dnnl::matmul::primitive_desc(d, attr, eng));
    a = dnnl::memory(amd, eng, const_cast<float *>(pa));
    b = dnnl::memory(bmd, eng, const_cast<float *>(pb));
    c = dnnl::memory(cmd, eng, pc);
    if (hasBias) bias = dnnl::memory(biasmd, eng, const_cast<float *>(pbias));
  }
  void run() {
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}};
    if (hasBias) args[DNNL_ARG_BIAS] = bias;
    prim.execute(strm, args);
  }
};

struct DnnlSoftmax {
  dnnl::softmax_forward prim;
  dnnl::memory x, y;
  DnnlSoftmax(int rows, int n, const float *px, float *py) {
    dnnl::memory::desc md({rows, n}, dt::f32, tag::ab);
    prim = dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, 1), eng));
    x = dnnl::memory(md, eng, const_cast<float *>(px));
    y = dnnl::memory(md, eng, py);
  }
  void run() { prim.execute(strm, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}}); }
};

// ---- the workloads ------------------------------------------------------------
void softmaxRow(const char *what, size_t n, int (*nxc)(const float *, float *)) {
  auto x = uniform(n, 0, 1, 10 + (unsigned)n);
  Floats y(n);
  auto ref = softmaxRef(x.data(), n);
  Row row{what, {}, 0};
  auto run = [&](const char *who, const std::function<void()> &f) {
    std::fill(y.begin(), y.end(), 0.f);
    f();
    check(relErr(y.data(), ref), row, who);
    row.enter(who, f);
  };
  run("nxc", [&] { nxc(x.data(), y.data()); });
  run("Eigen", [&] {
    MapCV xv(x.data(), n);
    MapV yv(y.data(), n);
    yv = (xv - xv.maxCoeff()).exp();
    yv *= 1.0f / yv.sum();
  });
  DnnlSoftmax sm(1, (int)n, x.data(), y.data());
  run("oneDNN", [&] {
    sm.run();
    strm.wait();
  });
  Halide::Runtime::Buffer<float> hx(x.data(), (int)n), hy(y.data(), (int)n);
  run("Halide", [&] { halide_softmax(hx.raw_buffer(), hy.raw_buffer()); });
  if (parallelPeers) run("Halide parallel", [&] { halide_softmax_par(hx.raw_buffer(), hy.raw_buffer()); });
  std::fill(y.begin(), y.end(), 0.f);
  halide_softmax_div(hx.raw_buffer(), hy.raw_buffer());
  check(relErr(y.data(), ref), row, "Halide e / s");
  row.enter("Halide e / s", [&] { halide_softmax_div(hx.raw_buffer(), hy.raw_buffer()); });
  row.measure();
  // Not a column of the table (its Halide multiplies by 1 / s like Eigen).
  dividingSoftmax.push_back({what, {row.times[0].second, row.times.back().second}});
  row.times.pop_back();
  record(row);
}

void matmulRow() {
  const int m = 10000, k = 784, n = 10;
  auto a = uniform((size_t)m * k, 0, 1, 20), b = uniform((size_t)k * n, -0.1f, 0.1f, 21);
  Floats c((size_t)m * n);
  auto ref = matmulRef(a.data(), b.data(), m, k, n);
  Row row{"W3 dot [10000,784] x [784,10]", {}, 0};
  auto run = [&](const char *who, const std::function<void()> &f) {
    f();
    check(relErr(c.data(), ref), row, who);
    row.enter(who, f);
  };
  run("nxc", [&] { pbmm_matmul(a.data(), b.data(), c.data()); });
  run("Eigen", [&] { MapM(c.data(), m, n).noalias() = MapCM(a.data(), m, k) * MapCM(b.data(), k, n); });
  DnnlMatmul mm(m, k, n, a.data(), b.data(), nullptr, c.data(), false);
  run("oneDNN", [&] {
    mm.run();
    strm.wait();
  });
  record(row);
}

void eigenPredict(const Mlp &p, const float *x, int batch, float *y, RowMatrix &h) {
  MapCM xm(x, batch, 784), w1(p.w1.data(), 784, 128), w2(p.w2.data(), 128, 10);
  Eigen::Map<const Eigen::RowVectorXf> b1(p.b1.data(), 128), b2(p.b2.data(), 10);
  h.noalias() = xm * w1;
  h = (h.rowwise() + b1).array().unaryExpr([](float v) { return 1.0f / (1.0f + std::exp(-v)); }).matrix();
  MapM ym(y, batch, 10);
  ym.noalias() = h * w2;
  ym.rowwise() += b2;
  for (int i = 0; i < batch; ++i) {
    auto r = ym.row(i).array();
    r = (r - r.maxCoeff()).exp();
    r /= r.sum();
  }
}

void predictRow(int batch, void *ws) {
  Mlp p;
  auto x = uniform((size_t)batch * 784, 0, 1, 30 + batch);
  Floats y((size_t)batch * 10), h((size_t)batch * 128);
  auto ref = predictRef(p, x.data(), batch);
  Row row{batch == 30 ? "W4 MLP 784-128-10 predict, batch 30" : "W5 same, batch 1", {}, 0};
  auto run = [&](const char *who, const std::function<void()> &f) {
    f();
    check(relErr(y.data(), ref), row, who);
    row.enter(who, f);
  };
  if (batch == 30)
    run("nxc", [&] { pbmnist_predict30_with_workspace(p.w1.data(), p.b1.data(), p.w2.data(), p.b2.data(), x.data(), y.data(), ws); });
  else
    run("nxc", [&] { pbmnist_predict1_with_workspace(p.w1.data(), p.b1.data(), p.w2.data(), p.b2.data(), x.data(), y.data(), ws); });
  RowMatrix hm(batch, 128);
  run("Eigen", [&] { eigenPredict(p, x.data(), batch, y.data(), hm); });
  DnnlMatmul l1(batch, 784, 128, x.data(), p.w1.data(), p.b1.data(), h.data(), true);
  DnnlMatmul l2(batch, 128, 10, h.data(), p.w2.data(), p.b2.data(), y.data(), false);
  DnnlSoftmax sm(batch, 10, y.data(), y.data());
  run("oneDNN", [&] {
    l1.run();
    l2.run();
    sm.run();
    strm.wait();
  });
  record(row);
}

void trainRow(void *ws) {
  Mlp p;
  const int batch = 30;
  auto x = uniform((size_t)batch * 784, 0, 1, 40);
  std::vector<uint8_t> labels(batch * 10, 0);
  Floats yl(batch * 10, 0.f);
  for (int i = 0; i < batch; ++i) labels[i * 10 + (i * 7) % 10] = 1, yl[i * 10 + (i * 7) % 10] = 1;
  Floats n1(784 * 128), n2(128), n3(1280), n4(10), e1(784 * 128), e2(128), e3(1280), e4(10);
  const float lr = 0.01f;
  Row row{"W6 training step (grad + SGD), batch 30", {}, 0};
  row.enter("nxc", [&] {
    pbmnist_update_with_workspace(p.w1.data(), p.b1.data(), p.w2.data(), p.b2.data(), x.data(), labels.data(), &lr,
                                  n1.data(), n2.data(), n3.data(), n4.data(), ws);
  });
  // Eigen: the backprop of the same loss, -sum(mean(log(p) * y, axes: [1])),
  // written by hand.
  RowMatrix h(batch, 128), pr(batch, 10), dz(batch, 128);
  auto eigenStep = [&] {
    eigenPredict(p, x.data(), batch, pr.data(), h);
    MapCM y(yl.data(), batch, 10);
    RowMatrix dlog = (pr.array().colwise() * y.rowwise().sum().array() - y.array()).matrix() / 10.0f;
    MapM(e3.data(), 128, 10) = MapCM(p.w2.data(), 128, 10) - lr * (h.transpose() * dlog);
    Eigen::Map<Eigen::RowVectorXf>(e4.data(), 10) =
        Eigen::Map<const Eigen::RowVectorXf>(p.b2.data(), 10) - lr * dlog.colwise().sum();
    dz.noalias() = dlog * MapCM(p.w2.data(), 128, 10).transpose();
    dz = (dz.array() * h.array() * (1.0f - h.array())).matrix();
    MapM(e1.data(), 784, 128) = MapCM(p.w1.data(), 784, 128) - lr * (MapCM(x.data(), batch, 784).transpose() * dz);
    Eigen::Map<Eigen::RowVectorXf>(e2.data(), 128) =
        Eigen::Map<const Eigen::RowVectorXf>(p.b1.data(), 128) - lr * dz.colwise().sum();
  };
  row.enter("Eigen", eigenStep);
  row.measure();
  // Both are one SGD step from the same parameters: they must agree.
  std::vector<double> ref(e1.begin(), e1.end());
  check(relErr(n1.data(), ref), row, "nxc vs Eigen (w1)");
  record(row);
}

void layerNormRow() {
  const int rows_ = 4096, n = 1024;
  auto x = uniform((size_t)rows_ * n, 0, 1, 50);
  Floats y((size_t)rows_ * n);
  std::vector<double> ref((size_t)rows_ * n);
  for (int r = 0; r < rows_; ++r) {
    double m = 0, v = 0;
    for (int c = 0; c < n; ++c) m += x[(size_t)r * n + c];
    m /= n;
    for (int c = 0; c < n; ++c) v += (x[(size_t)r * n + c] - m) * (x[(size_t)r * n + c] - m);
    v /= n;
    for (int c = 0; c < n; ++c) ref[(size_t)r * n + c] = (x[(size_t)r * n + c] - m) / std::sqrt(v + 1e-5);
  }
  Row row{"W7 layer norm [4096,1024], last axis", {}, 0};
  auto run = [&](const char *who, const std::function<void()> &f) {
    f();
    check(relErr(y.data(), ref), row, who);
    row.enter(who, f);
  };
  run("nxc", [&] { pbln_layer_norm(x.data(), y.data()); });
  run("Eigen", [&] {
    MapCM xm(x.data(), rows_, n);
    MapM ym(y.data(), rows_, n);
    for (int r = 0; r < rows_; ++r) {
      auto xr = xm.row(r).array();
      float mean = xr.mean();
      float var = (xr - mean).square().mean();
      ym.row(r).array() = (xr - mean) * (1.0f / std::sqrt(var + 1e-5f));
    }
  });
  dnnl::memory::desc md({rows_, n}, dt::f32, tag::ab);
  auto lnpd = dnnl::layer_normalization_forward::primitive_desc(
      dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, md, 1e-5f,
                                              dnnl::normalization_flags::none),
      eng);
  dnnl::layer_normalization_forward ln(lnpd);
  dnnl::memory xm(md, eng, x.data()), ym(md, eng, y.data());
  dnnl::memory mean(lnpd.mean_desc(), eng), var(lnpd.variance_desc(), eng);
  run("oneDNN", [&] {
    ln.execute(strm, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DST, ym}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var}});
    strm.wait();
  });
  Halide::Runtime::Buffer<float> hx(x.data(), n, rows_), hy(y.data(), n, rows_);
  run("Halide", [&] { halide_layer_norm(hx.raw_buffer(), hy.raw_buffer()); });
  if (parallelPeers) run("Halide parallel", [&] { halide_layer_norm_par(hx.raw_buffer(), hy.raw_buffer()); });
  record(row);
}

/// The CPU's model name, from /proc/cpuinfo.
std::string cpuModel() {
  std::FILE *f = std::fopen("/proc/cpuinfo", "r");
  char line[512];
  std::string model = "unknown CPU";
  while (f && std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "model name", 10) == 0 && std::strchr(line, ':')) {
      model = std::strchr(line, ':') + 2;
      model.erase(model.find_last_not_of("\n") + 1);
      break;
    }
  if (f) std::fclose(f);
  return model;
}

/// The instruction set oneDNN's kernels use on this CPU.
const char *dnnlIsa() {
  switch (dnnl::get_effective_cpu_isa()) {
  case dnnl::cpu_isa::sse41: return "SSE4.1";
  case dnnl::cpu_isa::avx: return "AVX";
  case dnnl::cpu_isa::avx2: return "AVX2";
  case dnnl::cpu_isa::avx2_vnni: return "AVX2 VNNI";
  case dnnl::cpu_isa::avx512_core: return "AVX-512";
  case dnnl::cpu_isa::avx512_core_vnni: return "AVX-512 VNNI";
  case dnnl::cpu_isa::avx512_core_bf16: return "AVX-512 BF16";
  case dnnl::cpu_isa::avx512_core_amx: return "AVX-512 AMX";
  default: return "other";
  }
}

} // namespace

int main(int argc, char **argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  if (threads == 1)
    std::printf("CPU: %s; nxc runs its %s variant, oneDNN %s kernels, Eigen %s (-march=native)\n", cpuModel().c_str(),
                pbmnist_cpu_variant(), dnnlIsa(),
#if defined(__AVX512F__)
                "AVX-512"
#elif defined(__AVX2__)
                "AVX2"
#else
                "SSE"
#endif
    );
  omp_set_num_threads(threads);
  Eigen::setNbThreads(threads);
  halide_set_num_threads(threads);
  for (int (*set)(int) : {pbsm_set_threads, pbmm_set_threads, pbmnist_set_threads, pbln_set_threads})
    if (set(threads) != threads) std::fprintf(stderr, "nxc: cannot run on %d threads\n", threads);
  parallelPeers = threads > 1;
  size_t wsBytes = std::max({pbmnist_predict30_workspace_size(), pbmnist_predict1_workspace_size(),
                             pbmnist_update_workspace_size()});
  void *ws = std::aligned_alloc(64, (wsBytes + 64) / 64 * 64);

  softmaxRow("W1 softmax f32[1000]", 1000, pbsm_softmax_f32_1000);
  softmaxRow("W2 softmax f32[1000000]", 1000000, pbsm_softmax_f32_1000000);
  matmulRow();
  predictRow(30, ws);
  predictRow(1, ws);
  trainRow(ws);
  layerNormRow();

  std::printf("\n%d thread%s for nxc and the peers; median us per call (at 1 thread the contenders are timed in turns); ratio = nxc / fastest peer\n\n", threads,
              threads == 1 ? "" : "s");
  std::printf("| workload | nxc | Eigen | oneDNN | Halide | fastest peer | ratio |\n|---|---|---|---|---|---|---|\n");
  for (auto &r : rows) {
    auto cell = [&](const std::string &who) -> std::string {
      double best = INFINITY;
      for (auto &[name, t] : r.times)
        if (name.rfind(who, 0) == 0) best = std::min(best, t);
      if (best == INFINITY) return "-";
      char text[32];
      std::snprintf(text, sizeof text, "%.2f", best * 1e6);
      return text;
    };
    std::string best;
    double bt = INFINITY;
    for (size_t i = 1; i < r.times.size(); ++i)
      if (r.times[i].second < bt) bt = r.times[i].second, best = r.times[i].first;
    std::printf("| %s | %s | %s | %s | %s | %s | %.2fx |\n", r.what.c_str(), cell("nxc").c_str(), cell("Eigen").c_str(),
                cell("oneDNN").c_str(), cell("Halide").c_str(), best.c_str(), r.times[0].second / bt);
  }
  std::printf("\nHalide's softmax with Nx's division (y = e / s, serial; the table's Halide multiplies by 1 / s):");
  for (auto &[what, t] : dividingSoftmax)
    std::printf(" %s %.2f us (nxc %.2fx);", what.substr(0, 2).c_str(), t.second * 1e6, t.first / t.second);
  std::printf("\n");
  std::printf("\nworst relative error against float64, per workload:");
  for (auto &r : rows) std::printf(" %.1e", r.worstErr);
  std::printf("\n");
  std::free(ws);
  return 0;
}
