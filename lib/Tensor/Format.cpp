//===- Format.cpp - tensors printed as Nx's inspect prints them -----------===//
//
// The layout rules, and where they come from:
//
//  * The frame (nx/lib/nx/tensor.ex, `defimpl Inspect` for Nx.Tensor):
//    "#Nx.Tensor<", then nested by 2 the type and shape ("f32[2][3]", named
//    axes as "[x: 2]", Nx.Shape.to_algebra/4) and the data, each on its own
//    line, then ">" on a line at the outer nesting. The whole is force_unfit.
//  * The data (nx/lib/nx/backend.ex, Nx.Backend.inspect/3 and chunk/5): a
//    scalar is its number alone; the innermost axis is "[a, b, c]" on one line
//    (separator ", ", never broken); every outer axis is "[" + line + rows
//    joined by "," + line + line + "]", the rows nested by 2. Lines are
//    forced, so the output does not depend on the width, and an empty outer
//    axis leaves a line holding only its indentation.
//  * The limit (chunk_each/5): each number printed takes one from
//    Inspect.Opts :limit (50 by default); when it reaches 0 the axis being
//    printed ends with "..." in place of its remaining entries.
//  * Numbers (Nx.Backend.float_to_string/3): integers in decimal, floats as
//    nxFloatString spells them (nxc/Tensor/FloatFormat.h).
//  * Tuples (Elixir's `defimpl Inspect, for: Tuple`, Inspect.Algebra.
//    container_doc_with_opts/6 with break: :flex): "{" + elements + "}" with
//    the elements nested by 1 and separated by "," and a flex break. A tensor
//    is force_unfit, so at width 80 (IEx, IO.inspect) every break is taken and
//    each element starts a new line; at infinite width (Kernel.inspect/1) the
//    breaks print as " ". Each element is inspected with the limit one lower
//    than the previous (call_container_fun/3), and a tuple whose limit runs
//    out ends with ", ..." (plain text, which fits after the break).
//
//===----------------------------------------------------------------------===//
#include "nxc/Tensor/HostTensor.h"
#include "nxc/Frontend/AST.h"

#include "nxc/Tensor/FloatFormat.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace nxc {
namespace {

/// Inspect.Opts :limit, with :infinity as a negative number.
struct Limit {
  int64_t left;
  bool infinite() const { return left < 0; }
  bool exhausted() const { return left == 0; }
  void take() {
    if (!infinite()) --left;
  }
};

void newline(std::string &out, int64_t indent) {
  out += '\n';
  out.append((size_t)indent, ' ');
}

std::string elementString(const HostTensor &t, int64_t i) {
  ElemType e = t.type.elem;
  switch (e.kind) {
  case TypeKind::S: return fmt::to_string(t.atInt(i));
  case TypeKind::U: return fmt::to_string(t.atUInt(i));
  case TypeKind::BF: return nxFloatString(t.bitsAt(i), 16, true);
  case TypeKind::F8E4M3FN: return nxF8String(t.bitsAt(i), true);
  case TypeKind::F: return e.bits == 8 ? nxF8String(t.bitsAt(i), false) : nxFloatString(t.bitsAt(i), e.bits, false);
  case TypeKind::C: {
    // Complex.to_string/1: the real part, then the imaginary part with its
    // sign (`1.0-2.0i`, `0.0+Infi`), each as its part type prints.
    int bits = e.bits / 2;
    std::string re = nxFloatString(t.partBitsAt(i, 0), bits, false);
    std::string im = nxFloatString(t.partBitsAt(i, 1), bits, false);
    return re + (im[0] == '-' ? "" : "+") + im + "i";
  }
  }
  return "?";
}

/// Nx.Backend's chunk/5 for axes [axis, rank) of `t`, starting at flat
/// element `index`, rendered at nesting `indent`. Advances `index` past the
/// sub-tensor (printed or not) and takes from `limit` per number printed.
void chunk(const HostTensor &t, size_t axis, int64_t &index, Limit &limit, int64_t indent, std::string &out) {
  const Shape &shape = t.type.shape;
  if (axis == shape.size()) {
    out += elementString(t, index++);
    limit.take();
    return;
  }
  // Elements per step along `axis`: none in an empty tensor, whose other
  // extents may multiply beyond int64 (an .npy of shape (0, 3832, ...)).
  bool empty = std::find(shape.begin(), shape.end(), int64_t(0)) != shape.end();
  int64_t stride = empty ? 0 : 1;
  for (size_t a = axis + 1; a < shape.size() && !empty; ++a) stride *= shape[a];
  bool innermost = axis + 1 == shape.size();
  int64_t end = index + shape[axis] * stride;
  // An empty axis counts as one element against the limit, so that an empty
  // tensor with huge other extents prints a bounded text (as Nx prints it).
  if (shape[axis] == 0) limit.take();
  out += '[';
  if (!innermost) newline(out, indent + 2);
  for (int64_t k = 0; k < shape[axis]; ++k) {
    if (k) {
      out += ',';
      if (innermost) out += ' ';
      else newline(out, indent + 2);
    }
    if (limit.exhausted()) { // chunk_each/5 with a limit of 0
      out += "...";
      break;
    }
    chunk(t, axis + 1, index, limit, indent + 2, out);
  }
  index = end;
  if (!innermost) newline(out, indent);
  out += ']';
}

void formatTensor(const HostTensor &t, Limit limit, int64_t indent, std::string &out,
                  const std::vector<std::string> &vectorized = {}) {
  out += "#Nx.Tensor<";
  newline(out, indent + 2);
  if (!vectorized.empty() && vectorized.size() <= t.type.shape.size()) {
    // vectorized[x: 2][y: 3], then the inner type
    out += "vectorized";
    for (size_t k = 0; k < vectorized.size(); ++k)
      fmt::format_to(std::back_inserter(out), FMT_STRING("[{}: {}]"), vectorized[k], t.type.shape[k]);
    newline(out, indent + 2);
    TensorType inner = t.type;
    inner.shape.erase(inner.shape.begin(), inner.shape.begin() + vectorized.size());
    if (inner.names.size() >= vectorized.size())
      inner.names.erase(inner.names.begin(), inner.names.begin() + vectorized.size());
    out += inner.str();
  } else {
    out += t.type.str();
  }
  newline(out, indent + 2);
  if (!t.consistent()) { // not a tensor Nx could hold; never read past the data
    fmt::format_to(std::back_inserter(out), FMT_STRING("<{} data bytes for {} elements>"), t.data.size(),
                   t.numElements());
  } else {
    int64_t index = 0;
    // An empty tensor's [] rows: at most kEmptyRows, whatever the limit.
    constexpr int64_t kEmptyRows = 1000;
    if (t.numElements() == 0 && (limit.infinite() || limit.left > kEmptyRows)) limit.left = kEmptyRows;
    chunk(t, 0, index, limit, indent + 2, out);
  }
  newline(out, indent);
  out += '>';
}

void formatValue(const HostValue &v, Limit limit, bool pretty, int64_t indent, std::string &out) {
  if (!v.isTuple) {
    if (!v.term.empty()) out += v.term;
    else
      formatTensor(v.tensor, limit, indent, out, v.vectorized);
    return;
  }
  if (!v.keys.empty()) {
    // A map as Elixir inspects one of tensors: one `key: value` per line.
    out += "%" + v.structName + "{";
    bool allAtoms = std::none_of(v.keys.begin(), v.keys.end(), ast::isStringKey);
    for (size_t k = 0; k < v.elems.size(); ++k) {
      out += k ? "," : "";
      if (pretty) newline(out, indent + 2);
      else out += k ? " " : "";
      out += ast::mapKeyPrefix(v.keys[k], allAtoms);
      formatValue(v.elems[k], limit, pretty, indent + 2, out);
    }
    if (pretty) newline(out, indent);
    out += '}';
    return;
  }
  out += '{';
  for (size_t k = 0; k < v.elems.size(); ++k) {
    // "..." is plain text and fits after the flex break; a tensor never does.
    bool elided = limit.exhausted(); // container_each/5 once the limit is spent
    if (k) {
      out += ',';
      if (pretty && !elided) newline(out, indent + 1);
      else out += ' ';
    }
    if (elided) {
      out += "...";
      break;
    }
    limit.take(); // call_container_fun/3: each element sees one less
    formatValue(v.elems[k], limit, pretty, indent + 1, out);
  }
  out += '}';
}

} // namespace

std::string formatNx(const HostTensor &t, const FormatOptions &opts) {
  std::string out;
  formatTensor(t, Limit{opts.limit}, 0, out);
  return out;
}

std::string formatNx(const HostValue &v, const FormatOptions &opts) {
  std::string out;
  formatValue(v, Limit{opts.limit}, opts.pretty, 0, out);
  return out;
}

} // namespace nxc
