//===- HostTensor.h - tensors in host memory, .npy/.npz, literals -*- C++ -*-===//
//
// The data side of `nxc jit`: a dense row-major tensor with Nx's type, read
// from and written to NumPy's .npy/.npz files, parsed from a command-line
// literal ("f32:[1, 2, 3]"), and printed exactly as Nx's `inspect` does.
//
// Element data is always stored native little-endian; f16 and bf16 elements
// are kept as their raw 16-bit patterns (see nxc/Tensor/Half.h).
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TENSOR_HOSTTENSOR_H
#define NXC_TENSOR_HOSTTENSOR_H

#include "nxc/Frontend/Diagnostics.h"
#include "nxc/Sema/Types.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nxc {

/// A dense row-major tensor in host memory, with Nx's type.
struct HostTensor {
  TensorType type;           ///< element type and shape (names are printed if present)
  std::vector<uint8_t> data; ///< numElements() * elem.bytes() bytes, native little-endian

  /// A zero-filled tensor of the given type.
  static HostTensor zeros(TensorType type);
  /// A zero-filled tensor of element type `elem` and shape `shape`.
  static HostTensor zeros(ElemType elem, Shape shape) { return zeros(TensorType{elem, std::move(shape), {}}); }

  int64_t numElements() const { return type.numElements(); }
  ElemType elem() const { return type.elem; }
  const Shape &shape() const { return type.shape; }
  /// True when `data` has exactly the size the type asks for.
  bool consistent() const;

  /// Element `i` (flat, row-major) as a double: exact for every type except
  /// s64/u64 beyond 2^53. f16/bf16 are widened from their bit patterns.
  double at(int64_t i) const;
  /// Element `i` as a signed integer (floats are truncated toward zero,
  /// u64 above INT64_MAX wraps).
  int64_t atInt(int64_t i) const;
  /// Element `i` as an unsigned integer (the raw value for u64).
  uint64_t atUInt(int64_t i) const;
  /// The raw bits of element `i`, zero-extended (f32 1.0 -> 0x3F800000);
  /// of a complex element, its real part's (partBitsAt).
  uint64_t bitsAt(int64_t i) const;
  /// Stores `bits` (the low elem.bytes() bytes) as element `i`; of a complex
  /// element, as its real part with a zero imaginary part.
  void setBits(int64_t i, uint64_t bits);
  /// The raw bits of part `part` (0 real, 1 imaginary) of complex element
  /// `i`: an f32 (c64) or f64 (c128).
  uint64_t partBitsAt(int64_t i, int part) const;
  void setPartBits(int64_t i, int part, uint64_t bits);
  /// Part `part` of complex element `i` as a double (of a real element: the
  /// element for part 0, zero for part 1).
  double partAt(int64_t i, int part) const;

  /// Same type, shape and bytes.
  bool operator==(const HostTensor &o) const { return type.sameTypeAndShape(o.type) && data == o.data; }
  bool operator!=(const HostTensor &o) const { return !(*this == o); }
};

/// A tensor of a type NumPy has not, as NumPy files hold it: the bytes of
/// f8/f8_e4m3fn as u8, s2/s4 (u2/u4) as s8 (u8) values in their range.
/// Retypes `h` as `declared` when it is such a file's array of the same
/// shape; an error says what does not fit; nothing for any other pair.
Status retypeStored(HostTensor &h, ElemType declared, const std::string &what);

/// A tuple tree of tensors (for tuple results/arguments): leaf or tuple.
struct HostValue {
  bool isTuple = false;
  HostTensor tensor;            ///< the leaf, when !isTuple
  std::vector<HostValue> elems; ///< the elements, when isTuple
  std::vector<std::string> keys; ///< a map's keys (one per element), with isTuple
  std::string structName;        ///< a struct's module
  /// A leaf that is an Elixir term, not a tensor, as Elixir prints it (the
  /// repl's `0` from a transform, a struct's keep field `:nan`); `tensor` is
  /// then a u8 scalar standing in for it where a tensor must be passed.
  std::string term;
  /// A term given in a template (`whiten?: false` in a struct's), with no
  /// placeholder tensor: not among the flattened inputs.
  bool literal = false;
  /// A leaf with Nx's vectorized axes: their names (the tensor's leading
  /// axes), printed as Nx prints a vectorized tensor.
  std::vector<std::string> vectorized;

  static HostValue leaf(HostTensor t) { HostValue v; v.tensor = std::move(t); return v; }
  static HostValue tuple(std::vector<HostValue> elems) {
    HostValue v;
    v.isTuple = true;
    v.elems = std::move(elems);
    return v;
  }
};

//===----------------------------------------------------------------------===//
// Nx.serialize/2 files (lib/Tensor/NxSerialize.cpp)
//===----------------------------------------------------------------------===//

/// Whether `bytes` start as Nx.serialize/2's output does ("nx", a version).
bool isNxSerialized(const std::vector<uint8_t> &bytes);
/// The tensor or container (tuples, maps by key, structs) Nx.serialize/2
/// wrote, format v1 (Nx 0.6 on), compressed or not; `name` names it in
/// messages.
Result<HostValue> parseNxSerialized(const std::vector<uint8_t> &bytes, const std::string &name);
Result<HostValue> readNxSerialized(const std::string &path);

//===----------------------------------------------------------------------===//
// .safetensors files (lib/Tensor/Safetensors.cpp)
//===----------------------------------------------------------------------===//

/// Whether `bytes` start as a safetensors file does (a u64 header size that
/// fits the file, then '{'); files are recognized by content, not name.
bool isSafetensors(const std::vector<uint8_t> &bytes);
/// Whether a file of these bytes named `name` is read as safetensors: its
/// content says so, or its name ends in .safetensors (then a malformed file
/// gets the format's own errors, not a guess at another format).
bool readsAsSafetensors(const std::vector<uint8_t> &bytes, const std::string &name);
/// The file's tensors as a map by name (string keys, byte-wise sorted);
/// `name` names the file in messages.
Result<HostValue> parseSafetensors(const std::vector<uint8_t> &bytes, const std::string &name);

//===----------------------------------------------------------------------===//
// NumPy files (lib/Tensor/Npy.cpp, lib/Tensor/Npz.cpp)
//===----------------------------------------------------------------------===//
//
// Element types map to NumPy dtypes as s8..s64 <-> int8..int64 (`<i1`..`<i8`),
// u8..u64 <-> uint8..uint64, f16/f32/f64 <-> float16/32/64, and NumPy's bool
// (`|b1`) reads as u8. bf16 has no NumPy dtype: writing one is an error that
// says to convert it to f32 first (bf16ToF32 in nxc/Tensor/Half.h is exact).
// Errors carry no source location; their messages name the file.

/// A whole file's bytes, with the messages of readNpy/readNpz when it cannot
/// be read: for a caller that both parses and hashes a file, reading it once.
Result<std::vector<uint8_t>> readFileBytes(const std::string &path);

/// Reads one array from a .npy file (format versions 1.0, 2.0 and 3.0; either
/// byte order). Rejects Fortran order, object and structured dtypes,
/// truncated files and malformed headers.
Result<HostTensor> readNpy(const std::string &path);
/// Parses the bytes of a .npy file; `name` is used in error messages.
Result<HostTensor> parseNpy(const uint8_t *bytes, size_t size, const std::string &name);
/// parseNpy taking the bytes over, so that the data is not copied.
Result<HostTensor> parseNpy(std::vector<uint8_t> &&bytes, const std::string &name);
/// Writes `t` as a version 1.0 .npy file, byte for byte as numpy.save does
/// (version 2.0 if the header would not fit in 1.0).
Status writeNpy(const std::string &path, const HostTensor &t);
/// The bytes writeNpy writes.
Result<std::vector<uint8_t>> serializeNpy(const HostTensor &t);

/// One array of an .npz archive, named as in the zip without ".npy".
struct NpzEntry {
  std::string name; ///< "arr_0", or the keyword given to numpy.savez
  HostTensor tensor;
};

/// Reads every array of an .npz archive (numpy.savez / savez_compressed) in
/// the archive's order: arr_0, arr_1, ... as numpy.savez writes them. Entries
/// may be stored or deflated; zip64 records are understood; CRC-32s are checked.
Result<std::vector<HostTensor>> readNpz(const std::string &path);
/// readNpz with the entry names.
Result<std::vector<NpzEntry>> readNpzEntries(const std::string &path);
/// readNpzEntries on an archive in memory; `name` names it in messages.
Result<std::vector<NpzEntry>> parseNpz(const uint8_t *data, size_t size, const std::string &name);
/// Writes `ts` as an uncompressed .npz archive with entries arr_0.npy,
/// arr_1.npy, ... (numpy.savez's layout; readable by numpy.load).
Status writeNpz(const std::string &path, const std::vector<HostTensor> &ts);
/// writeNpz with explicit entry names ("x" is stored as "x.npy").
Status writeNpzEntries(const std::string &path, const std::vector<NpzEntry> &entries);

//===----------------------------------------------------------------------===//
// Literals (lib/Tensor/Literal.cpp)
//===----------------------------------------------------------------------===//

/// Parses a tensor literal as Nx writes tensors: a number ("3.5", "-2",
/// "1.0e-3", "1_000"), a nested list ("[[1, 2], [3, 4]]"), `true`/`false`,
/// or a non-finite value (NaN, Inf, -Inf, :nan, :infinity, :neg_infinity),
/// optionally prefixed by an Nx type ("f32:[1, 2, 3]", "u8:7").
///
/// Without a prefix the type is inferred as Nx.tensor/1 does (Nx.Type.infer
/// merged over the elements): integers are s32, floats and non-finite values
/// f32, booleans u8; "[1.0, 2]" is f32. "[]" is f32[0] (nested: "[[], []]" is
/// f32[2][0]), where Nx.tensor/1 would raise.
///
/// Unlike Nx.tensor/2, which wraps integers silently, a value that does not
/// fit the (given or inferred) type is an error (300 in u8, 2^31 in s32, 1e39
/// in f32), as is a float or non-finite value for an integer type. Floats are
/// rounded to nearest even (f16 directly from the double, as Nx does). For
/// bf16 Nx keeps the top half of the f32 (truncation); nxc rounds, so that
/// every value formatNx prints parses back to the same bits.
///
/// Errors point at the offending character (line 1 of `source`, e.g. a
/// SourceFile named "argument 2").
Result<HostTensor> parseLiteral(std::shared_ptr<const SourceFile> source);

//===----------------------------------------------------------------------===//
// Printing (lib/Tensor/Format.cpp)
//===----------------------------------------------------------------------===//

/// How formatNx lays out its output (Elixir's Inspect.Opts).
struct FormatOptions {
  /// Inspect.Opts :limit: elements printed before "...". Elixir's default is
  /// 50; a negative value means :infinity.
  int64_t limit = 50;
  /// Inspect.Opts :pretty. true renders at width 80 as IEx and IO.inspect do,
  /// so tuple elements go one per line; false renders as Kernel.inspect/1
  /// (infinite width), joining them with ", ". Single tensors print the same
  /// either way.
  bool pretty = true;
};

/// Nx's inspect output of a tensor, e.g.
///   #Nx.Tensor<
///     f32[3]
///     [1.0, 2.0, 3.0]
///   >
std::string formatNx(const HostTensor &t, const FormatOptions &opts = {});
/// A tuple prints as Elixir prints a tuple of tensors: "{#Nx.Tensor<...>,\n #Nx.Tensor<...>}".
std::string formatNx(const HostValue &v, const FormatOptions &opts = {});

} // namespace nxc

#endif // NXC_TENSOR_HOSTTENSOR_H
