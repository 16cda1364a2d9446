//===- TensorNpyTest.cpp - .npy and .npz files against NumPy --------------===//
//
// Fixtures are made at test time by Debian's NumPy (/usr/bin/python3; the
// python3 first on PATH may lack numpy) in a fresh temporary directory, and
// what nxc writes is checked by numpy.load in the same way. Without NumPy
// those cases print a message and check only what needs no Python.
//
//===----------------------------------------------------------------------===//
#include "nxc/Tensor/Half.h"
#include "nxc/Tensor/HostTensor.h"
#include "nxc/Tensor/Zip.h"

#include "TestUtil.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace nxc;
using nxc::test::errorOf;
using nxc::test::source;

namespace {

namespace fs = std::filesystem;

const char *const kPython = "/usr/bin/python3";

/// A fresh temporary directory, removed with everything in it at the end.
struct TempDir {
  std::string path;
  TempDir() {
    std::error_code ec;
    std::string tmpl = (fs::temp_directory_path(ec) / "nxc-tensor-XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    REQUIRE(mkdtemp(buf.data()) != nullptr);
    path = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string &name) const { return path + "/" + name; }
};

bool haveNumpy() {
  static int have = -1;
  if (have < 0) have = std::system((std::string(kPython) + " -c 'import numpy' >/dev/null 2>&1").c_str()) == 0;
  if (!have) MESSAGE("NumPy is not available in " << kPython << "; skipping the checks that need it");
  return have;
}

std::string slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<uint8_t> fileBytes(const std::string &path) {
  std::string s = slurp(path);
  return std::vector<uint8_t>(s.begin(), s.end());
}

void putBytes(const std::string &path, const std::vector<uint8_t> &b) {
  std::ofstream f(path, std::ios::binary);
  f.write((const char *)b.data(), (std::streamsize)b.size());
}

/// Runs a Python script in `dir`; returns its exit status and output.
std::pair<int, std::string> python(const TempDir &dir, const std::string &script) {
  std::ofstream(dir / "script.py") << "import numpy as np\nimport sys, io, zipfile\n" << script;
  std::string cmd = "cd '" + dir.path + "' && " + kPython + " script.py > output.txt 2>&1";
  int rc = std::system(cmd.c_str());
  return {rc, slurp(dir / "output.txt")};
}

/// Runs a script that must succeed.
std::string pythonOk(const TempDir &dir, const std::string &script) {
  auto [rc, out] = python(dir, script);
  INFO("python output:\n" << out);
  REQUIRE(rc == 0);
  return out;
}

/// A .npy file with the given header dict text, built by hand.
std::vector<uint8_t> npy(const std::string &header, const std::vector<uint8_t> &data = {}, int major = 1) {
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', (uint8_t)major, 0};
  std::string h = header + "\n";
  uint64_t n = h.size();
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out.push_back((uint8_t)(n >> (8 * i)));
  out.insert(out.end(), h.begin(), h.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

Result<HostTensor> parse(const std::vector<uint8_t> &b) { return parseNpy(b.data(), b.size(), "x.npy"); }

HostTensor lit(const std::string &text) {
  auto t = parseLiteral(source(text, "literal"));
  REQUIRE_MESSAGE(t.ok(), errorOf(t));
  return *t;
}

std::vector<uint8_t> asBytes(const std::string &s) { return std::vector<uint8_t>(s.begin(), s.end()); }

/// Every dtype NumPy can give nxc, with values at the edges of its range.
const char *const kDtypeScript = R"PY(
specs = {
  'int8': [-128, 127, 0, -1, 5, 100],
  'int16': [-32768, 32767, 0, -1, 300, -300],
  'int32': [-2147483648, 2147483647, 0, -1, 70000, -70000],
  'int64': [-9223372036854775808, 9223372036854775807, 0, -1, 2**40, -2**40],
  'uint8': [0, 255, 1, 128, 7, 200],
  'uint16': [0, 65535, 1, 256, 7, 40000],
  'uint32': [0, 4294967295, 1, 65536, 7, 3000000000],
  'uint64': [0, 18446744073709551615, 1, 2**32, 7, 2**63],
  'float16': [0.0, -1.5, 65504.0, float('inf'), float('nan'), 6e-08],
  'float32': [0.1, -0.0, 3.4028234663852886e38, float('-inf'), float('nan'), 1e-45],
  'float64': [0.1, -0.0, 1.7976931348623157e308, float('inf'), float('nan'), 5e-324],
  'bool': [True, False, True, True, False, False],
}
for name, vals in specs.items():
    a = np.array(vals, dtype=name).reshape(2, 3)
    for order, tag in (('<', 'le'), ('>', 'be')):
        np.save(f'{name}_{tag}.npy', a.astype(a.dtype.newbyteorder(order)))
    with open(f'{name}.bin', 'wb') as f:
        f.write(a.astype(a.dtype.newbyteorder('<')).tobytes())
)PY";

const std::pair<const char *, const char *> kDtypes[] = {
    {"int8", "s8"},     {"int16", "s16"},    {"int32", "s32"},     {"int64", "s64"},
    {"uint8", "u8"},    {"uint16", "u16"},   {"uint32", "u32"},    {"uint64", "u64"},
    {"float16", "f16"}, {"float32", "f32"}, {"float64", "f64"}, {"bool", "u8"}};

} // namespace

TEST_SUITE("tensor npy") {

TEST_CASE("every NumPy dtype, in both byte orders") {
  if (!haveNumpy()) return;
  TempDir dir;
  pythonOk(dir, kDtypeScript);
  for (auto [np, nx] : kDtypes) {
    std::string bin = slurp(dir / (std::string(np) + ".bin"));
    for (const char *tag : {"le", "be"}) {
      std::string file = dir / (std::string(np) + "_" + tag + ".npy");
      CAPTURE(file);
      auto t = readNpy(file);
      REQUIRE_MESSAGE(t.ok(), errorOf(t));
      CHECK(t->type.str() == std::string(nx) + "[2][3]");
      CHECK(t->data == std::vector<uint8_t>(bin.begin(), bin.end()));
    }
  }
  // Spot checks of the converted values.
  auto s64 = readNpy(dir / "int64_be.npy");
  CHECK(s64->atInt(0) == INT64_MIN);
  CHECK(s64->atInt(1) == INT64_MAX);
  CHECK(s64->atInt(4) == (1ll << 40));
  auto u64 = readNpy(dir / "uint64_be.npy");
  CHECK(u64->atUInt(1) == UINT64_MAX);
  CHECK(u64->atUInt(5) == (1ull << 63));
  auto f16 = readNpy(dir / "float16_be.npy");
  CHECK(f16->at(1) == -1.5);
  CHECK(f16->at(2) == 65504.0);
  CHECK(std::isinf(f16->at(3)));
  CHECK(std::isnan(f16->at(4)));
  CHECK(f16->bitsAt(5) == 0x0001);
  auto f32 = readNpy(dir / "float32_be.npy");
  CHECK(f32->bitsAt(0) == 0x3DCCCCCD);
  CHECK(f32->bitsAt(1) == 0x80000000);
  CHECK(f32->bitsAt(5) == 0x00000001);
  auto f64 = readNpy(dir / "float64_le.npy");
  CHECK(f64->at(0) == 0.1);
  CHECK(f64->at(5) == 5e-324);
  auto b = readNpy(dir / "bool_le.npy");
  CHECK(formatNx(*b) == "#Nx.Tensor<\n  u8[2][3]\n  [\n    [1, 0, 1],\n    [1, 0, 0]\n  ]\n>");
  auto s16 = readNpy(dir / "int16_be.npy");
  CHECK(s16->atInt(4) == 300);
  CHECK(s16->atInt(5) == -300);
}

TEST_CASE("scalars, empty arrays and format versions 2.0 and 3.0") {
  if (!haveNumpy()) return;
  TempDir dir;
  pythonOk(dir, R"PY(
np.save('scalar_f32.npy', np.float32(3.5))
np.save('scalar_i64.npy', np.int64(-7))
np.save('scalar_bool.npy', np.bool_(True))
np.save('empty_rows.npy', np.zeros((0, 3), np.float32))
np.save('empty.npy', np.zeros((0,), np.int8))
np.save('empty_mid.npy', np.zeros((2, 0, 5), '>f8'))
a = np.arange(12, dtype=np.int32).reshape(3, 4)
for v in ((1, 0), (2, 0), (3, 0)):
    with open(f'v{v[0]}.npy', 'wb') as f:
        np.lib.format.write_array(f, a, version=v)
)PY");
  auto s = readNpy(dir / "scalar_f32.npy");
  REQUIRE(s.ok());
  CHECK(formatNx(*s) == "#Nx.Tensor<\n  f32\n  3.5\n>");
  auto i = readNpy(dir / "scalar_i64.npy");
  REQUIRE(i.ok());
  CHECK(i->type.str() == "s64");
  CHECK(i->atInt(0) == -7);
  CHECK(readNpy(dir / "scalar_bool.npy")->type.str() == "u8");
  auto e = readNpy(dir / "empty_rows.npy");
  REQUIRE(e.ok());
  CHECK(e->type.str() == "f32[0][3]");
  CHECK(e->data.empty());
  CHECK(readNpy(dir / "empty.npy")->type.str() == "s8[0]");
  CHECK(readNpy(dir / "empty_mid.npy")->type.str() == "f64[2][0][5]");
  for (const char *v : {"v1.npy", "v2.npy", "v3.npy"}) {
    CAPTURE(v);
    auto t = readNpy(dir / v);
    REQUIRE_MESSAGE(t.ok(), errorOf(t));
    CHECK(t->type.str() == "s32[3][4]");
    CHECK(t->atInt(11) == 11);
  }
  CHECK(fileBytes(dir / "v2.npy")[6] == 2);
  CHECK(fileBytes(dir / "v3.npy")[6] == 3);
}

TEST_CASE("unsupported arrays are rejected with messages that name the file") {
  if (!haveNumpy()) return;
  TempDir dir;
  pythonOk(dir, R"PY(
np.save('fortran.npy', np.asfortranarray(np.arange(6.0).reshape(2, 3)))
np.save('object.npy', np.array([1, 'a', None], dtype=object), allow_pickle=True)
np.save('complex.npy', np.zeros(2, np.clongdouble))
np.save('record.npy', np.zeros(2, dtype=[('a', '<i4'), ('b', '<f4')]))
np.save('text.npy', np.array(['abc', 'de']))
np.save('dates.npy', np.array(['2024-01-01'], dtype='datetime64[D]'))
np.save('half.npy', np.zeros(2, np.float16))
)PY");
  std::string f = dir / "fortran.npy";
  CHECK(errorOf(readNpy(f)) == f + ": Fortran-ordered arrays are not supported; save a C-ordered copy "
                                   "(numpy.ascontiguousarray) instead");
  std::string o = dir / "object.npy";
  CHECK(errorOf(readNpy(o)) == o + ": object arrays (dtype '|O') are not supported; save numbers only");
  std::string c = dir / "complex.npy";
  CHECK(errorOf(readNpy(c)) == c + ": unsupported dtype '<c32'; nxc reads bool, int8..int64, uint8..uint64, "
                                   "float16, float32, float64, complex64 and complex128");
  std::string r = dir / "record.npy";
  CHECK(errorOf(readNpy(r)) == r + ": structured dtypes (record arrays) are not supported");
  CHECK(errorOf(readNpy(dir / "text.npy")).find("unsupported dtype '<U3' (string)") != std::string::npos);
  CHECK(errorOf(readNpy(dir / "dates.npy")).find("unsupported dtype '<M8[D]'") != std::string::npos);
  CHECK(readNpy(dir / "half.npy").ok());
  std::string missing = dir / "missing.npy";
  CHECK(errorOf(readNpy(missing)) == missing + ": cannot open: No such file or directory");
}

TEST_CASE("hand-made headers: byte orders, spellings, and every malformation") {
  std::vector<uint8_t> two32 = {1, 0, 0, 0, 2, 0, 0, 0};
  // '=' and '|' mean native order; keys may come in any order and quoting.
  auto eq = parse(npy("{'descr': '=i4', 'fortran_order': False, 'shape': (2,), }", two32));
  REQUIRE_MESSAGE(eq.ok(), errorOf(eq));
  CHECK(eq->type.str() == "s32[2]");
  CHECK(eq->atInt(1) == 2);
  auto bar = parse(npy("{'descr': '|u1', 'fortran_order': False, 'shape': (8,), }", two32));
  CHECK(bar->type.str() == "u8[8]");
  auto dq = parse(npy("{\"shape\": (2L, 2L), \"descr\": \">u2\", \"fortran_order\": False}", two32));
  REQUIRE_MESSAGE(dq.ok(), errorOf(dq));
  CHECK(dq->type.str() == "u16[2][2]");
  CHECK(dq->atUInt(0) == 0x0100); // big-endian bytes 01 00
  auto v2 = parse(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", {0, 0, 0x80, 0x3F}, 2));
  CHECK(v2->at(0) == 1.0);
  auto fortran1 = parse(npy("{'descr': '<i4', 'fortran_order': True, 'shape': (2,), }", two32));
  CHECK(errorOf(fortran1).find("Fortran-ordered arrays are not supported") != std::string::npos);

  const std::string ok = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
  auto bad = [&](const std::string &header, const std::vector<uint8_t> &data = {}) { return errorOf(parse(npy(header, data))); };
  CHECK(bad("{'descr': '<i4', 'shape': (2,), }", two32) == "x.npy: malformed .npy header (missing 'fortran_order')");
  CHECK(bad("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'x': 1}", two32) ==
        "x.npy: malformed .npy header (unexpected key 'x')");
  CHECK(bad("{'descr': '<i4', 'descr': '<i4', 'fortran_order': False, 'shape': (2,)}", two32) ==
        "x.npy: malformed .npy header (duplicate key 'descr' at offset 17)");
  CHECK(bad("{'descr': '<i4', 'fortran_order': False, 'shape': 2, }", two32) ==
        "x.npy: malformed .npy header ('shape' is not a tuple)");
  CHECK(bad("{'descr': '<i4', 'fortran_order': False, 'shape': (-1,), }", two32) ==
        "x.npy: malformed .npy header (cannot parse the value of 'shape' at offset 50)");
  CHECK(bad("{'descr': '<i4', 'fortran_order': 0, 'shape': (2,), }", two32) ==
        "x.npy: malformed .npy header ('fortran_order' is not a bool)");
  CHECK(bad("{'descr': 4, 'fortran_order': False, 'shape': (2,), }", two32) ==
        "x.npy: malformed .npy header ('descr' is not a string)");
  CHECK(bad("[1, 2]") == "x.npy: malformed .npy header (expected '{' at offset 0)");
  CHECK(bad("{'descr: '<i4'}") == "x.npy: malformed .npy header (expected ':' after 'descr: ' at offset 10)");
  CHECK(bad("{'descr': '<i4' 'shape': (2,)}") == "x.npy: malformed .npy header (expected ',' or '}' at offset 16)");
  CHECK(bad(ok + " junk", two32) == "x.npy: malformed .npy header (unexpected text after the header dict at offset 58)");
  CHECK(bad("{'descr': '<i4', 'fortran_order': False, 'shape': (2,)") ==
        "x.npy: malformed .npy header (expected ',' or '}' at offset 55)");
  CHECK(bad("{'descr': 'i', 'fortran_order': False, 'shape': (2,), }", two32) == "x.npy: unsupported dtype 'i'");
  CHECK(bad("{'descr': '<i3', 'fortran_order': False, 'shape': (2,), }", two32).find("x.npy: unsupported dtype '<i3'; ") == 0);
  CHECK(bad("{'descr': '<f16', 'fortran_order': False, 'shape': (2,), }", two32).find("unsupported dtype '<f16'") !=
        std::string::npos);
  CHECK(bad("{'descr': '', 'fortran_order': False, 'shape': (2,), }", two32) == "x.npy: empty dtype descr");
  // Sizes are checked before anything is allocated.
  CHECK(bad(ok, {1, 0, 0, 0}) ==
        "x.npy: truncated .npy file (shape (2,) of <i4 needs 8 data bytes, 4 are left)");
  CHECK(bad(ok, {1, 0, 0, 0, 2, 0, 0, 0, 9}) == "x.npy: 1 unexpected bytes after the data of shape (2,)");
  CHECK(bad("{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }") ==
        "x.npy: truncated .npy file (shape (1099511627776,) of <f8 needs 8796093022208 data bytes, 0 are left)");
  CHECK(bad("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }") ==
        "x.npy: shape (4294967296, 4294967296, 4294967296) is too large");
  CHECK(bad("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }") ==
        "x.npy: malformed .npy header (cannot parse the value of 'shape' at offset 50)");

  // The preamble.
  std::vector<uint8_t> good = npy(ok, two32);
  CHECK(errorOf(parse({})) == "x.npy: empty file (not a .npy file)");
  CHECK(errorOf(parse(asBytes("PK\3\4 not an npy file"))) == "x.npy: not a .npy file (bad magic; expected \\x93NUMPY)");
  std::vector<uint8_t> v4 = good;
  v4[6] = 4;
  CHECK(errorOf(parse(v4)) == "x.npy: unsupported .npy format version 4.0 (nxc reads 1.0, 2.0 and 3.0)");
  std::vector<uint8_t> minor = good;
  minor[7] = 1;
  CHECK(errorOf(parse(minor)) == "x.npy: unsupported .npy format version 1.1 (nxc reads 1.0, 2.0 and 3.0)");
  std::vector<uint8_t> longHeader = good;
  longHeader[8] = 0xFF;
  longHeader[9] = 0x7F;
  CHECK(errorOf(parse(longHeader)).find("x.npy: truncated .npy file (the header says 32767 bytes") == 0);

  // Every prefix of a valid file is an error, never a crash or a bad read.
  for (size_t n = 0; n < good.size(); ++n) {
    CAPTURE(n);
    std::vector<uint8_t> cut(good.begin(), good.begin() + (long)n);
    auto r = parse(cut);
    CHECK_FALSE(r.ok());
  }
  // Any single corrupted byte gives a tensor or an error, never a crash.
  for (size_t i = 0; i < good.size(); ++i)
    for (uint8_t x : {0x00, 0x20, 0x27, 0x28, 0x29, 0x2C, 0x3A, 0x7D, 0xFF}) {
      std::vector<uint8_t> c = good;
      c[i] = x;
      (void)parse(c);
    }
}

TEST_CASE("writeNpy is byte for byte numpy.save, and numpy reads it back") {
  const std::pair<const char *, const char *> cases[] = {
      {"s8", "s8:[[-128, 127], [0, -1]]"},
      {"s16", "s16:[-32768, 32767, 5]"},
      {"s32", "s32:[[1, 2, 3], [4, 5, 6]]"},
      {"s64", "s64:[-9223372036854775808, 9223372036854775807]"},
      {"u8", "u8:[0, 255]"},
      {"u16", "u16:[0, 65535]"},
      {"u32", "u32:[0, 4294967295]"},
      {"u64", "u64:[0, 18446744073709551615]"},
      {"f16", "f16:[0.1, -2.5, 65504, Inf, NaN]"},
      {"f32", "f32:[[0.1, -0.0], [3.4028235e38, -Inf]]"},
      {"f64", "f64:[0.1, 1e-300, NaN]"},
      {"scalar", "f32:3.5"},
      {"empty", "f64:[[], []]"},
      {"long_axis", "u8:[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]"},
  };
  TempDir dir;
  std::string checks;
  for (auto [name, text] : cases) {
    HostTensor t = lit(text);
    std::string file = dir / (std::string(name) + ".npy");
    REQUIRE_MESSAGE(writeNpy(file, t).ok(), name);
    auto back = readNpy(file);
    REQUIRE_MESSAGE(back.ok(), errorOf(back));
    CHECK_MESSAGE(*back == t, name);
    std::string literal = text;
    literal = literal.substr(literal.find(':') + 1);
    for (const char *from : {"NaN", "-Inf", "Inf"}) {
      size_t at;
      std::string to = std::string(from) == "NaN" ? "nan" : std::string(from) == "Inf" ? "inf" : "-inf";
      while ((at = literal.find(from)) != std::string::npos) literal.replace(at, std::string(from).size(), "float('" + to + "')");
    }
    std::string dtype = t.type.elem.name();
    dtype = dtype[0] == 's' ? "int" + dtype.substr(1) : dtype[0] == 'u' ? "uint" + dtype.substr(1) : "float" + dtype.substr(1);
    checks += "check('" + std::string(name) + "', np.array(" + literal + ", dtype='" + dtype + "'))\n";
  }
  if (!haveNumpy()) return;
  std::string out = pythonOk(dir, R"PY(
def check(name, want):
    a = np.load(name + '.npy')
    buf = io.BytesIO()
    np.save(buf, a)
    same_bytes = buf.getvalue() == open(name + '.npy', 'rb').read()
    same = a.dtype == want.dtype and a.shape == want.shape and np.array_equal(a, want, equal_nan=a.dtype.kind == 'f')
    print(name, 'OK' if same and same_bytes else f'FAIL {a!r} {a.dtype} bytes={same_bytes}')
)PY" + checks);
  CHECK(out.find("FAIL") == std::string::npos);
  INFO(out);
  CHECK(std::count(out.begin(), out.end(), '\n') == (long)std::size(cases));
}

TEST_CASE("bf16 has no NumPy dtype") {
  TempDir dir;
  HostTensor b = lit("bf16:[1.5, -2, Inf]");
  std::string file = dir / "b.npy";
  CHECK(errorOf(writeNpy(file, b)) == file + ": bf16 has no NumPy dtype; convert the tensor to f32 (exact) before writing it");
  CHECK(errorOf(writeNpz(dir / "b.npz", {b})) ==
        dir / "b.npz" + ": array 'arr_0': bf16 has no NumPy dtype; convert the tensor to f32 (exact) before writing it");
  HostTensor f = bf16ToF32(b);
  CHECK(f.type.str() == "f32[3]");
  CHECK(formatNx(f) == "#Nx.Tensor<\n  f32[3]\n  [1.5, -2.0, Inf]\n>");
  REQUIRE(writeNpy(file, f).ok());
  CHECK(*readNpy(file) == f);
  HostTensor bad = lit("f32:[1, 2]");
  bad.data.pop_back();
  CHECK(errorOf(writeNpy(file, bad)) == file + ": tensor of type f32[2] has 7 data bytes, expected 8");
  CHECK(errorOf(writeNpy(dir / "no/such/dir.npy", f)).find(": cannot create: No such file or directory") != std::string::npos);
}

TEST_CASE("numpy.savez and savez_compressed archives") {
  if (!haveNumpy()) return;
  TempDir dir;
  pythonOk(dir, R"PY(
a = np.arange(6, dtype=np.float32).reshape(2, 3)
b = np.array([1, -2, 3], dtype='>i2')
c = np.float64(2.5)
np.savez('plain.npz', a, b, c)
np.savez_compressed('packed.npz', a, b, c)
np.savez('named.npz', x=a, y=b)
np.savez('none.npz')
big = np.arange(300000, dtype=np.float64) * 0.5
np.savez_compressed('big.npz', big, big.astype(np.float32))
with zipfile.ZipFile('method.npz', 'w', compression=zipfile.ZIP_BZIP2) as z:
    z.writestr('arr_0.npy', open('plain.npz', 'rb').read()[:10])
with zipfile.ZipFile('other.npz', 'w') as z:
    z.writestr('notes.txt', b'hello')
)PY");
  for (const char *name : {"plain.npz", "packed.npz"}) {
    CAPTURE(name);
    auto entries = readNpzEntries(dir / name);
    REQUIRE_MESSAGE(entries.ok(), errorOf(entries));
    REQUIRE(entries->size() == 3);
    CHECK((*entries)[0].name == "arr_0");
    CHECK((*entries)[1].name == "arr_1");
    CHECK((*entries)[2].name == "arr_2");
    CHECK(formatNx((*entries)[0].tensor) == "#Nx.Tensor<\n  f32[2][3]\n  [\n    [0.0, 1.0, 2.0],\n    [3.0, 4.0, 5.0]\n  ]\n>");
    CHECK(formatNx((*entries)[1].tensor) == "#Nx.Tensor<\n  s16[3]\n  [1, -2, 3]\n>");
    CHECK(formatNx((*entries)[2].tensor) == "#Nx.Tensor<\n  f64\n  2.5\n>");
    auto ts = readNpz(dir / name);
    REQUIRE(ts.ok());
    CHECK(ts->size() == 3);
    CHECK((*ts)[1] == (*entries)[1].tensor);
  }
  auto named = readNpzEntries(dir / "named.npz");
  REQUIRE(named.ok());
  REQUIRE(named->size() == 2);
  CHECK((*named)[0].name == "x");
  CHECK((*named)[1].name == "y");
  CHECK(readNpz(dir / "none.npz")->empty());
  auto big = readNpz(dir / "big.npz");
  REQUIRE_MESSAGE(big.ok(), errorOf(big));
  REQUIRE(big->size() == 2);
  CHECK((*big)[0].type.str() == "f64[300000]");
  CHECK((*big)[0].at(299999) == 149999.5);
  CHECK((*big)[1].at(12345) == 6172.5);

  std::string m = dir / "method.npz";
  CHECK(errorOf(readNpz(m)) == m + ":arr_0.npy: compression method 12 is not supported (only stored and deflated entries are)");
  std::string o = dir / "other.npz";
  CHECK(errorOf(readNpz(o)) == o + ": entry 'notes.txt' is not a .npy array");
  std::string n = dir / "a.npy";
  pythonOk(dir, "np.save('a.npy', np.zeros(3))\n");
  CHECK(errorOf(readNpz(n)) == n + ": not a zip archive (.npz files are zip archives)");
}

TEST_CASE("corrupt archives: CRC-32, deflate data, truncation, encryption") {
  if (!haveNumpy()) return;
  TempDir dir;
  pythonOk(dir, R"PY(
a = np.arange(6, dtype=np.float32).reshape(2, 3)
np.savez('plain.npz', a, np.array([7, 8, 9], dtype=np.uint8))
np.savez_compressed('packed.npz', np.arange(64, dtype=np.int32), a)
)PY");
  std::vector<uint8_t> plain = fileBytes(dir / "plain.npz");
  std::vector<uint8_t> packed = fileBytes(dir / "packed.npz");
  std::string bad = dir / "bad.npz";

  // A flipped bit in a stored array: its CRC-32 no longer matches.
  std::vector<uint8_t> flipped = plain;
  const uint8_t five[] = {0, 0, 0xA0, 0x40}; // 5.0f, the last element of arr_0
  auto at = std::search(flipped.begin(), flipped.end(), std::begin(five), std::end(five));
  REQUIRE(at != flipped.end());
  at[3] ^= 0x01;
  putBytes(bad, flipped);
  CHECK(errorOf(readNpz(bad)).find(bad + ":arr_0.npy: CRC-32 mismatch (stored ") == 0);

  // Every prefix and every single corrupted byte: an error or a result, no crash.
  for (const std::vector<uint8_t> *original : {&plain, &packed}) {
    for (size_t len = 0; len < original->size(); ++len) {
      CAPTURE(len);
      auto r = readZip(original->data(), len, "cut.npz");
      CHECK_FALSE(r.ok());
    }
    int corrupted = 0;
    for (size_t i = 0; i < original->size(); ++i) {
      std::vector<uint8_t> c = *original;
      c[i] ^= 0x5A;
      auto r = readZip(c.data(), c.size(), "c.npz");
      if (r.ok())
        for (auto &m : *r) (void)parseNpy(m.data.data(), m.data.size(), m.name);
      else ++corrupted;
    }
    CHECK(corrupted > 0);
  }
  // Damage inside the deflate stream is caught by zlib or by the CRC.
  {
    std::vector<uint8_t> c = packed;
    size_t mid = 70; // inside arr_0's deflate stream (its local header takes 59 bytes)
    for (size_t i = mid; i < mid + 8; ++i) c[i] ^= 0xFF;
    putBytes(bad, c);
    std::string e = errorOf(readNpz(bad));
    CHECK_MESSAGE((e.find("corrupt deflate data") != std::string::npos || e.find("CRC-32 mismatch") != std::string::npos ||
                   e.find("inflates to") != std::string::npos || e.find("truncated") != std::string::npos),
                  e);
  }
  // The encryption flag in the central directory.
  {
    std::vector<uint8_t> c = plain;
    const uint8_t sig[] = {'P', 'K', 1, 2};
    auto cd = std::search(c.begin(), c.end(), std::begin(sig), std::end(sig));
    REQUIRE(cd != c.end());
    cd[8] |= 1;
    putBytes(bad, c);
    CHECK(errorOf(readNpz(bad)) == bad + ":arr_0.npy: encrypted zip entries are not supported");
  }
  std::vector<uint8_t> cut(plain.begin(), plain.begin() + 100);
  putBytes(bad, cut);
  CHECK(errorOf(readNpz(bad)) == bad + ": truncated zip archive (no end of central directory record)");
}

TEST_CASE("writeNpz: numpy.load reads it, in order") {
  TempDir dir;
  std::vector<HostTensor> ts = {lit("f32:[[1, 2], [3, 4]]"), lit("s64:-5"), lit("u8:[]"), lit("f16:[0.5, NaN]")};
  std::string file = dir / "out.npz";
  REQUIRE(writeNpz(file, ts).ok());
  auto back = readNpzEntries(file);
  REQUIRE_MESSAGE(back.ok(), errorOf(back));
  REQUIRE(back->size() == ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    CHECK((*back)[i].name == "arr_" + std::to_string(i));
    CHECK((*back)[i].tensor == ts[i]);
  }
  REQUIRE(writeNpzEntries(dir / "named.npz", {{"weights", ts[0]}, {"bias", ts[1]}}).ok());
  // The same members deflated and with zip64 records everywhere.
  std::vector<ZipMember> members;
  for (size_t i = 0; i < ts.size(); ++i) members.push_back({"arr_" + std::to_string(i) + ".npy", *serializeNpy(ts[i])});
  ZipWriteOptions z64;
  z64.deflate = true;
  z64.forceZip64 = true;
  auto zipped = writeZip(members, z64);
  REQUIRE(zipped.ok());
  putBytes(dir / "z64.npz", *zipped);
  auto again = readNpz(dir / "z64.npz");
  REQUIRE_MESSAGE(again.ok(), errorOf(again));
  CHECK(*again == ts);
  // Writing is deterministic.
  REQUIRE(writeNpz(dir / "out2.npz", ts).ok());
  CHECK(fileBytes(dir / "out.npz") == fileBytes(dir / "out2.npz"));

  if (!haveNumpy()) return;
  std::string out = pythonOk(dir, R"PY(
for name in ('out.npz', 'z64.npz'):
    with np.load(name) as z:
        print(name, list(z.keys()))
        print(z['arr_0'].dtype, z['arr_0'].tolist(), z['arr_1'].dtype, z['arr_1'].tolist(),
              z['arr_2'].dtype, z['arr_2'].shape, z['arr_3'].dtype, z['arr_3'].tolist())
    print(zipfile.ZipFile(name).testzip())
with np.load('named.npz') as z:
    print(list(z.keys()), z['bias'].tolist())
)PY");
  CHECK(out == "out.npz ['arr_0', 'arr_1', 'arr_2', 'arr_3']\n"
               "float32 [[1.0, 2.0], [3.0, 4.0]] int64 -5 uint8 (0,) float16 [0.5, nan]\n"
               "None\n"
               "z64.npz ['arr_0', 'arr_1', 'arr_2', 'arr_3']\n"
               "float32 [[1.0, 2.0], [3.0, 4.0]] int64 -5 uint8 (0,) float16 [0.5, nan]\n"
               "None\n"
               "['weights', 'bias'] -5\n");
}

} // TEST_SUITE
