//===- Printing.cpp - print_value and print_expr --------------------------===//
//
// print_expr prints the traced expression when it is traced (compile time,
// as Nx's does). print_value adds a print_value node that the JIT lowers to
// calls into the host's printer (PrintValue.h) and that ahead-of-time
// compilation drops: a library has no terminal to print to.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include "nxc/Sema/PrintValue.h"

#include <fmt/format.h>

#include <cstdio>
#include <sstream>

namespace nxc {

std::string PrintHeader::encode() const {
  // One line: a newline in the label travels as \n, a backslash as \\.
  std::string label1;
  for (char c : label) label1 += c == '\n' ? std::string("\\n") : c == '\\' ? std::string("\\\\") : std::string(1, c);
  std::string out = label1 + "\n" + std::to_string(limit) + "\n" + structure + "\n";
  for (auto &t : leaves) {
    out += t.elem.name();
    for (size_t d = 0; d < t.shape.size(); ++d) {
      out += " ";
      if (d < t.names.size() && !t.names[d].empty()) out += t.names[d] + "=";
      out += std::to_string(t.shape[d]);
    }
    out += "\n";
  }
  return out;
}

std::optional<PrintHeader> PrintHeader::decode(const std::string &text) {
  std::istringstream in(text);
  PrintHeader h;
  std::string limit, line;
  std::string label;
  if (!std::getline(in, label) || !std::getline(in, limit) || !std::getline(in, h.structure)) return std::nullopt;
  for (size_t i = 0; i < label.size(); ++i) {
    if (label[i] == '\\' && i + 1 < label.size()) {
      h.label += label[i + 1] == 'n' ? '\n' : label[i + 1];
      ++i;
    } else {
      h.label += label[i];
    }
  }
  h.limit = std::stoll(limit);
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string type, dim;
    if (!(ls >> type)) return std::nullopt;
    auto elem = ElemType::parse(type);
    if (!elem) return std::nullopt;
    TensorType t;
    t.elem = *elem;
    bool named = false;
    std::vector<std::string> names;
    while (ls >> dim) {
      auto eq = dim.find('=');
      names.push_back(eq == std::string::npos ? "" : dim.substr(0, eq));
      named |= eq != std::string::npos;
      t.shape.push_back(std::stoll(eq == std::string::npos ? dim : dim.substr(eq + 1)));
    }
    if (named) t.names = names;
    h.leaves.push_back(t);
  }
  return h;
}

namespace sema {

Result<Value> Tracer::printValue(std::vector<Value> &args, const Loc &loc) {
  // print_value(expr), (expr, opts), (expr, fun), (expr, fun, opts).
  const Value *fun = args.size() >= 2 && args[1].kind == Value::Function ? &args[1] : nullptr;
  const Value *opts = args.back().kind == Value::List && args.size() >= 2 ? &args.back() : nullptr;
  if (args.size() == 3 && !fun)
    return error(args[1].loc.valid() ? args[1].loc : loc, "print_value/3 expects a function as its second argument");
  if (args.size() >= 2 && !fun && !opts)
    return error(args[1].loc.valid() ? args[1].loc : loc,
                 fmt::format(FMT_STRING("print_value expects a function or a keyword list of IO.inspect options, "
                                        "got {}"),
                             describeValue(args[1])));
  PrintHeader h;
  if (opts) {
    for (size_t i = 0; i < opts->elems.size(); ++i) {
      const std::string &key = i < opts->keys.size() ? opts->keys[i] : "";
      const Value &v = opts->elems[i];
      const Loc &vl = v.loc.valid() ? v.loc : loc;
      if (key == "label") {
        if (v.kind != Value::String && v.kind != Value::Atom)
          return error(vl, fmt::format(FMT_STRING("print_value: :label must be a string, got {}"), describeValue(v)));
        h.label = v.atom;
      } else if (key == "limit") {
        if (v.kind == Value::Atom && v.atom == "infinity") h.limit = -1;
        else if (v.kind == Value::Int && v.i >= 0) h.limit = v.i;
        else return error(vl, fmt::format(FMT_STRING("print_value: :limit must be a non-negative integer or :infinity, "
                                                     "got {}"),
                                          describeValue(v)));
      }
      // Other IO.inspect options only change the layout; they are accepted.
    }
  }
  Value shown = args[0];
  if (fun) {
    NXC_TRY(t, applyFunction(*fun, {args[0]}, loc));
    shown = t;
  }
  std::vector<Value> leaves;
  flattenLeaves(shown, leaves);
  Node n;
  n.op = Op::PrintValue;
  n.loc = loc;
  size_t next = 0;
  std::function<std::string(const Value &)> structure = [&](const Value &v) -> std::string {
    if (v.kind != Value::Tuple) return std::to_string(next++);
    std::string s = "{";
    for (size_t i = 0; i < v.elems.size(); ++i) s += (i ? "," : "") + structure(v.elems[i]);
    return s + "}";
  };
  h.structure = structure(shown);
  for (auto &l : leaves) {
    NXC_TRY(t, toTensor(l, l.loc.valid() ? l.loc : loc));
    n.operands.push_back(t);
    h.leaves.push_back(g_.typeOf(t));
  }
  if (n.operands.empty()) return error(loc, "print_value expects a tensor or a tuple of tensors");
  n.type = h.leaves[0];
  n.text = h.encode();
  add(n);
  return args[0];
}

/// hook(expr, name), hook(expr, fun), hook(expr, name, fun): expr. A named
/// hook without a function runs nothing (as Nx, unless its caller's :hooks
/// option gives one). A function runs where the value is computed, as far as
/// compiled code can run Elixir: its IO.inspect calls print (as
/// print_value), and anything else it does is an error naming the hook.
Result<Value> Tracer::hook(std::vector<Value> &args, const Loc &loc) {
  const Value *fun = args.back().kind == Value::Function && args.size() >= 2 ? &args.back() : nullptr;
  if (args.size() == 3 && !fun)
    return error(args[2].loc.valid() ? args[2].loc : loc,
                 fmt::format(FMT_STRING("hook/3 expects a function as its third argument, got {}"),
                             describeValue(args[2])));
  if (!fun) return args[0];
  ++hookCallbackDepth_;
  auto ran = applyFunction(*fun, {args[0]}, loc);
  --hookCallbackDepth_;
  if (!ran) {
    Diag d = ran.error();
    d.message = "this hook's function cannot run in compiled code (nxc runs IO.inspect calls in it, printing the "
                "value): " + d.message;
    return d;
  }
  return args[0];
}

/// create_token(): the token hook_token/attach_token thread through code
/// (hooks run in the order the code computes their values; nxc keeps the
/// token only to check it).
Value Tracer::token(const Loc &loc) {
  Value t;
  t.kind = Value::Map;
  t.atom = "Nx.Defn.Token";
  t.loc = loc;
  t.keys = {"hooks"};
  t.keyLocs = {loc};
  Value hooks;
  hooks.kind = Value::List;
  hooks.loc = loc;
  t.elems = {hooks};
  return t;
}

Status Tracer::checkToken(const Value &v, const std::string &fn, const Loc &loc) {
  if (v.kind == Value::Map && v.atom == "Nx.Defn.Token") return okStatus();
  return error(v.loc.valid() ? v.loc : loc,
               fmt::format(FMT_STRING("{} expects a token from create_token/0 as its first argument, got {}"), fn,
                           describeValue(v)));
}

Result<Value> Tracer::printExpr(std::vector<Value> &args, const Loc &loc) {
  std::vector<Value> leaves;
  flattenLeaves(args[0], leaves);
  std::string out;
  for (size_t i = 0; i < leaves.size(); ++i) {
    NXC_TRY(t, toTensor(leaves[i], leaves[i].loc.valid() ? leaves[i].loc : loc));
    out += (i ? ",\n" : "") + g_.printExpr(t);
  }
  if (leaves.size() > 1) out = "{" + out + "}";
  std::string label;
  if (args.size() == 2 && args[1].kind == Value::List)
    for (size_t i = 0; i < args[1].elems.size(); ++i)
      if (i < args[1].keys.size() && args[1].keys[i] == "label") label = args[1].elems[i].atom + ": ";
  fmt::print(FMT_STRING("{}{}\n"), label, out);
  std::fflush(stdout);
  return args[0];
}

} // namespace sema
} // namespace nxc
