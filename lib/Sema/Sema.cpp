//===- Sema.cpp - tracing a defn into a typed graph -----------------------===//
//
// The entry point of Sema; the work is done by the Tracer (Tracer.h).
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <fmt/format.h>

namespace nxc {

Result<Graph> trace(const ast::File &file, const Signature &sig, EagerEvaluator eager) {
  sema::Tracer t(file);
  t.setEagerEvaluator(std::move(eager));
  NXC_TRY(g, t.run(sig));
  NXC_CHECK(checkComplexOps(g));
  return std::move(g);
}

namespace sema {

std::string describeValue(const Value &v) {
  switch (v.kind) {
  case Value::Int: return fmt::format(FMT_STRING("the number {}"), v.i);
  case Value::Float: return "a float number";
  case Value::Atom: return fmt::format(FMT_STRING("the atom :{}"), v.atom);
  case Value::Tensor: return "a tensor";
  case Value::Vectorized: return "a vectorized tensor";
  case Value::Tuple: return fmt::format(FMT_STRING("a tuple of {} elements"), v.elems.size());
  case Value::List: return "a list";
  case Value::Function: return "a function";
  case Value::Range: return "a range";
  case Value::String: return fmt::format(FMT_STRING("the string {:?}"), v.atom);
  case Value::Map: return v.atom.empty() ? "a map" : fmt::format(FMT_STRING("a %{}{{}} struct"), v.atom);
  }
  return "a value";
}

} // namespace sema
} // namespace nxc
