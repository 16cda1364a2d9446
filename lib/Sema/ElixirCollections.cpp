//===- ElixirCollections.cpp - Map, Keyword, List, Enum at trace time -----===//
//
// The compile-time Elixir (CompileTimeElixir.cpp) of Map, Keyword, List and
// Enum: option lists, maps and structs, and the enumerations defn libraries
// run over shapes, axes and options while they trace.
//
//===----------------------------------------------------------------------===//
#include "ElixirCall.h"

#include "nxc/Frontend/ElixirFloat.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

namespace nxc::sema {

/// Map's functions.
Result<std::optional<Value>> Tracer::elixirMapCall(ElixirCall &call) {
  using Opt = std::optional<Value>;
  const std::string &name = call.name;
  std::vector<Value> &args = call.args;
  const Loc &loc = call.loc;
  size_t n = call.n;
  auto needMap = [&](size_t k) -> Status {
    if (args[k].kind != Value::Map)
      return error(call.argLoc(k),
                   fmt::format(FMT_STRING("Map.{} expects a map, got {}"), name, describeValue(args[k])));
    return okStatus();
  };
  if (name == "new" && n <= 2 && (n < 2 || args[1].kind == Value::Function)) {
    // new/0; new/1 from {key, value} pairs (a keyword list, a map); new/2
    // with each element transformed into its pair first.
    Value m;
    m.kind = Value::Map;
    m.loc = loc;
    if (n == 0) return Opt(m);
    NXC_TRY(items, call.enumerated(0));
    if (n == 2)
      for (auto &x : items) {
        NXC_TRY(pair, applyFunction(args[1], {x}, loc));
        x = pair;
      }
    NXC_TRY(built, mapOfPairs(m, items, loc));
    return Opt(built);
  }
  if (n < 1) return Opt();
  // A tensor's struct fields, as Nx.Tensor's: shape, type, names.
  if ((args[0].kind == Value::Tensor || args[0].kind == Value::Vectorized) && name == "fetch!" && n == 2 &&
      args[1].kind == Value::Atom) {
    const std::string &field = args[1].atom;
    if (field == "vectorized_axes" && entryLoopDepth_ > 0)
      return error(loc, "a tensor's vectorized_axes inside a while loop over vectorized state: nxc runs such a loop "
                        "once per entry, where it would see one entry alone; read them before the loop");
    if (field == "vectorized_axes" && args[0].kind == Value::Vectorized) {
      std::vector<std::pair<std::string, Value>> axes;
      for (size_t k = 0; k < args[0].keys.size(); ++k)
        axes.push_back({args[0].keys[k], Value::number(g_.typeOf(args[0].node).shape[k], loc)});
      return Opt(Value::keywords(axes, loc));
    }
    if (field == "shape" || field == "type" || field == "names") {
      std::vector<Value> one = {args[0]};
      NXC_TRY(v, callNx(field, one, loc));
      return Opt(v);
    }
    // A plain tensor has no vectorized axes.
    if (field == "vectorized_axes") return Opt(Value::list({}, loc));
    return error(loc, fmt::format(FMT_STRING("nxc knows a tensor's fields shape, type, names and vectorized_axes, "
                                             "not :{}"),
                                  field));
  }
  NXC_CHECK(needMap(0));
  const Value &map = args[0];
  // A struct's :__struct__ is its module (`model.__struct__.predict(...)`).
  Value structModule = Value::atomValue(map.atom, loc);
  auto find = [&](const Value &key) -> const Value * {
    if (key.kind == Value::Atom && key.atom == "__struct__" && !map.atom.empty()) return &structModule;
    if (key.kind != Value::Atom && key.kind != Value::String) return nullptr;
    std::string k = key.kind == Value::String ? ast::kStringKeyMark + key.atom : key.atom;
    auto it = std::find(map.keys.begin(), map.keys.end(), k);
    return it == map.keys.end() ? nullptr : &map.elems[it - map.keys.begin()];
  };
  if (name == "get" && (n == 2 || n == 3)) {
    const Value *v = find(args[1]);
    return Opt(v ? *v : n == 3 ? args[2] : Value::atomValue("nil", loc));
  }
  if (name == "fetch!" && n == 2) {
    const Value *v = find(args[1]);
    if (!v)
      return error(loc, fmt::format(FMT_STRING("** (KeyError) key {} not found in: {}"), inspectValue(args[1]),
                                    inspectValue(map)));
    return Opt(*v);
  }
  if (name == "has_key?" && n == 2) return Opt(boolean(find(args[1]) != nullptr, loc));
  if (name == "keys" && n == 1) {
    std::vector<Value> keys;
    for (auto &k : map.keys) {
      Value key = Value::atomValue(ast::keyText(k), loc);
      if (ast::isStringKey(k)) key.kind = Value::String;
      keys.push_back(key);
    }
    return Opt(call.listOf(keys));
  }
  if (name == "values" && n == 1) return Opt(call.listOf(map.elems));
  if ((name == "put" && n == 3) || (name == "delete" && n == 2)) {
    if (args[1].kind != Value::Atom && args[1].kind != Value::String)
      return error(call.argLoc(1), fmt::format(FMT_STRING("Map.{}: nxc's map keys are atoms or strings, got {}"), name,
                                          describeValue(args[1])));
    std::string key = args[1].kind == Value::String ? ast::kStringKeyMark + args[1].atom : args[1].atom;
    Value out = map;
    out.loc = loc;
    auto it = std::find(out.keys.begin(), out.keys.end(), key);
    if (name == "delete") {
      if (it != out.keys.end()) {
        size_t k = it - out.keys.begin();
        out.keys.erase(out.keys.begin() + k);
        out.elems.erase(out.elems.begin() + k);
        out.keyLocs.erase(out.keyLocs.begin() + k);
      }
      return Opt(out);
    }
    if (it != out.keys.end()) out.elems[it - out.keys.begin()] = args[2];
    else {
      out.keys.push_back(key);
      out.elems.push_back(args[2]);
      out.keyLocs.push_back(loc);
    }
    return Opt(out);
  }
  if (name == "merge" && (n == 2 || (n == 3 && args[2].kind == Value::Function))) {
    // merge/3: a key in both maps takes fun.(key, value1, value2).
    NXC_CHECK(needMap(1));
    Value out = map;
    out.loc = loc;
    for (size_t k = 0; k < args[1].keys.size(); ++k) {
      auto it = std::find(out.keys.begin(), out.keys.end(), args[1].keys[k]);
      if (it != out.keys.end() && n == 3) {
        NXC_TRY(merged,
                applyFunction(args[2],
                              {mapKeyTerm(args[1].keys[k], loc), out.elems[it - out.keys.begin()], args[1].elems[k]},
                              loc));
        out.elems[it - out.keys.begin()] = merged;
      } else if (it != out.keys.end())
        out.elems[it - out.keys.begin()] = args[1].elems[k];
      else {
        out.keys.push_back(args[1].keys[k]);
        out.elems.push_back(args[1].elems[k]);
        out.keyLocs.push_back(loc);
      }
    }
    return Opt(out);
  }
  if (name == "to_list" && n == 1) {
    Value out = call.listOf({});
    for (size_t k = 0; k < map.keys.size(); ++k) {
      if (ast::isStringKey(map.keys[k])) {
        Value key = Value::atomValue(ast::keyText(map.keys[k]), loc);
        key.kind = Value::String;
        out.elems.push_back(Value::tuple({key, map.elems[k]}, loc));
        out.keys.push_back("");
      } else {
        out.elems.push_back(map.elems[k]);
        out.keys.push_back(map.keys[k]);
      }
      out.keyLocs.push_back(loc);
    }
    return Opt(out);
  }
  return Opt();
  return Opt();
}

/// Keyword's functions.
Result<std::optional<Value>> Tracer::elixirKeywordCall(ElixirCall &call) {
  using Opt = std::optional<Value>;
  const std::string &name = call.name;
  std::vector<Value> &args = call.args;
  const Loc &loc = call.loc;
  size_t n = call.n;
  if (name == "keyword?" && n == 1) return Opt(boolean(args[0].kind == Value::List &&
                                                       (args[0].elems.empty() || args[0].isKeywordList()), loc));
  if (n < 1) return Opt();
  if (name == "validate!" && n == 2) {
    NXC_CHECK(call.needKeywords(0));
    // Elixir's message for keys the list of allowed ones lacks.
    if (args[1].kind == Value::List) {
      std::vector<std::string> allowed, unknown;
      for (size_t k = 0; k < args[1].elems.size(); ++k)
        allowed.push_back(":" + (args[1].keys[k].empty() && args[1].elems[k].kind == Value::Atom
                                     ? args[1].elems[k].atom
                                     : args[1].keys[k]));
      for (auto &key : args[0].keys)
        if (std::find(allowed.begin(), allowed.end(), ":" + key) == allowed.end()) unknown.push_back(":" + key);
      if (!unknown.empty())
        return error(loc, fmt::format(FMT_STRING("** (ArgumentError) unknown keys [{}] in {}, the allowed keys are: "
                                                 "[{}]"),
                                      fmt::join(unknown, ", "), inspectValue(args[0]), fmt::join(allowed, ", ")));
    }
    NXC_TRY(v, keywordValidate(args[0], args[1], loc));
    return Opt(v);
  }
  const std::set<std::string> keyed = {"get",    "fetch!",   "pop",   "pop!",     "put",     "put_new",
                                       "delete", "has_key?", "fetch", "get_lazy", "pop_lazy"};
  if (keyed.count(name) && n >= 2) {
    NXC_CHECK(call.needKeywords(0));
    NXC_CHECK(call.needAtom(1));
    const Value &list = args[0];
    const std::string &key = args[1].atom;
    auto first = std::find(list.keys.begin(), list.keys.end(), key);
    bool found = first != list.keys.end();
    const Value *value = found ? &list.elems[first - list.keys.begin()] : nullptr;
    Value without = list;
    without.loc = loc;
    for (size_t k = without.keys.size(); k-- > 0;)
      if (without.keys[k] == key) {
        without.elems.erase(without.elems.begin() + k);
        without.keys.erase(without.keys.begin() + k);
        without.keyLocs.erase(without.keyLocs.begin() + k);
      }
    Value dflt = n >= 3 ? args[2] : Value::atomValue("nil", loc);
    if (name == "get" && n <= 3) return Opt(found ? *value : dflt);
    if (name == "get_lazy" && n == 3) {
      // The function runs only when the key is missing.
      if (found) return Opt(*value);
      NXC_TRY(computed, applyFunction(args[2], {}, loc));
      return Opt(computed);
    }
    if (name == "pop_lazy" && n == 3) {
      // {value, rest}; the function runs only when the key is missing.
      if (found) return Opt(Value::tuple({*value, without}, loc));
      NXC_TRY(computed, applyFunction(args[2], {}, loc));
      return Opt(Value::tuple({computed, without}, loc));
    }
    if (name == "has_key?" && n == 2) return Opt(boolean(found, loc));
    if (name == "fetch" && n == 2)
      return Opt(found ? Value::tuple({Value::atomValue("ok", loc), *value}, loc) : Value::atomValue("error", loc));
    if (name == "fetch!" && n == 2) {
      if (!found)
        return error(loc, fmt::format(FMT_STRING("** (KeyError) key :{} not found in: {}"), key, inspectValue(list)));
      return Opt(*value);
    }
    if (name == "pop" && n <= 3) return Opt(Value::tuple({found ? *value : dflt, without}, loc));
    if (name == "pop!" && n == 2) {
      if (!found)
        return error(loc, fmt::format(FMT_STRING("** (KeyError) key :{} not found in: {}"), key, inspectValue(list)));
      return Opt(Value::tuple({*value, without}, loc));
    }
    if (name == "delete" && n == 2) return Opt(without);
    if ((name == "put" || name == "put_new") && n == 3) {
      if (name == "put_new" && found) return Opt(list);
      without.elems.insert(without.elems.begin(), args[2]);
      without.keys.insert(without.keys.begin(), key);
      without.keyLocs.insert(without.keyLocs.begin(), loc);
      return Opt(without);
    }
  }
  if (name == "merge" && n == 2) {
    NXC_CHECK(call.needKeywords(0));
    NXC_CHECK(call.needKeywords(1));
    Value out = call.listOf({});
    for (size_t k = 0; k < args[0].elems.size(); ++k)
      if (std::find(args[1].keys.begin(), args[1].keys.end(), args[0].keys[k]) == args[1].keys.end()) {
        out.elems.push_back(args[0].elems[k]);
        out.keys.push_back(args[0].keys[k]);
        out.keyLocs.push_back(args[0].keyLocs[k]);
      }
    out.elems.insert(out.elems.end(), args[1].elems.begin(), args[1].elems.end());
    out.keys.insert(out.keys.end(), args[1].keys.begin(), args[1].keys.end());
    out.keyLocs.insert(out.keyLocs.end(), args[1].keyLocs.begin(), args[1].keyLocs.end());
    return Opt(out);
  }
  if ((name == "take" || name == "drop" || name == "split") && n == 2) {
    // split/2: {take, drop}, each in the list's order.
    NXC_CHECK(call.needKeywords(0));
    NXC_CHECK(call.needList(1, name.c_str()));
    Value taken = call.listOf({}), rest = call.listOf({});
    for (size_t k = 0; k < args[0].elems.size(); ++k) {
      bool listed = false;
      for (auto &key : args[1].elems) listed |= key.kind == Value::Atom && key.atom == args[0].keys[k];
      Value &out = listed ? taken : rest;
      out.elems.push_back(args[0].elems[k]);
      out.keys.push_back(args[0].keys[k]);
      out.keyLocs.push_back(args[0].keyLocs[k]);
    }
    if (name == "split") return Opt(Value::tuple({taken, rest}, loc));
    return Opt(name == "take" ? taken : rest);
  }
  if (name == "keys" && n == 1) {
    NXC_CHECK(call.needKeywords(0));
    std::vector<Value> keys;
    for (auto &k : args[0].keys) keys.push_back(Value::atomValue(k, loc));
    return Opt(call.listOf(keys));
  }
  if (name == "values" && n == 1) {
    NXC_CHECK(call.needKeywords(0));
    return Opt(call.listOf(args[0].elems));
  }
  return Opt();
  return Opt();
}

/// List's functions.
Result<std::optional<Value>> Tracer::elixirListCall(ElixirCall &call) {
  using Opt = std::optional<Value>;
  const std::string &name = call.name;
  std::vector<Value> &args = call.args;
  const Loc &loc = call.loc;
  size_t n = call.n;
  if (name == "wrap" && n == 1) {
    if (args[0].isNil()) return Opt(call.listOf({}));
    if (args[0].kind == Value::List) return Opt(args[0]);
    return Opt(call.listOf({args[0]}));
  }
  if ((name == "first" || name == "last") && n >= 1 && n <= 2) {
    NXC_CHECK(call.needList(0, name.c_str()));
    if (args[0].elems.empty()) return Opt(n == 2 ? args[1] : Value::atomValue("nil", loc));
    return Opt(call.pairOf(args[0], name == "first" ? 0 : args[0].elems.size() - 1));
  }
  if (name == "duplicate" && n == 2) {
    if (args[1].kind != Value::Int || args[1].i < 0 || args[1].i > 1000000)
      return error(call.argLoc(1), "List.duplicate/2 expects a count from 0 to 1,000,000");
    return Opt(call.listOf(std::vector<Value>((size_t)args[1].i, args[0])));
  }
  if (((name == "replace_at" || name == "update_at" || name == "insert_at") && n == 3) ||
      (name == "delete_at" && n == 2)) {
    // Elixir's: a negative index counts from the end; out of range leaves
    // the list as it is (insert_at appends, or prepends below the start).
    NXC_CHECK(call.needList(0, name.c_str()));
    if (args[1].kind != Value::Int)
      return error(call.argLoc(1), fmt::format(FMT_STRING("List.{} expects an integer index, got {}"), name,
                                          describeValue(args[1])));
    std::vector<Value> e;
    for (size_t k = 0; k < args[0].elems.size(); ++k) e.push_back(call.pairOf(args[0], k));
    int64_t size = (int64_t)e.size(), at = args[1].i;
    if (name == "insert_at") {
      if (at < 0) at = std::max<int64_t>(0, size + at + 1);
      e.insert(e.begin() + std::min(at, size), args[2]);
      return Opt(call.listOf(e));
    }
    if (at < 0) at += size;
    if (at < 0 || at >= size) return Opt(call.listOf(e));
    if (name == "delete_at") e.erase(e.begin() + at);
    else if (name == "replace_at") e[(size_t)at] = args[2];
    else {
      NXC_TRY(updated, applyFunction(args[2], {e[(size_t)at]}, loc));
      e[(size_t)at] = updated;
    }
    return Opt(call.listOf(e));
  }
  if (name == "to_tuple" && n == 1) {
    NXC_CHECK(call.needList(0, "to_tuple"));
    std::vector<Value> e;
    for (size_t k = 0; k < args[0].elems.size(); ++k) e.push_back(call.pairOf(args[0], k));
    return Opt(Value::tuple(e, loc));
  }
  if (name == "flatten" && n == 1) {
    NXC_CHECK(call.needList(0, "flatten"));
    std::vector<Value> out;
    std::function<void(const Value &)> walk = [&](const Value &l) {
      for (size_t k = 0; k < l.elems.size(); ++k)
        if (l.keys[k].empty() && l.elems[k].kind == Value::List) walk(l.elems[k]);
        else out.push_back(call.pairOf(l, k));
    };
    walk(args[0]);
    return Opt(call.listOf(out));
  }
  return Opt();
  return Opt();
}

/// Enum's functions.
Result<std::optional<Value>> Tracer::elixirEnumCall(ElixirCall &call) {
  using Opt = std::optional<Value>;
  const std::string &name = call.name;
  std::vector<Value> &args = call.args;
  const Loc &loc = call.loc;
  size_t n = call.n;
  if (n < 1) return Opt();
  NXC_TRY(items, call.enumerated(0));
  auto call1 = [&](const Value &f, const Value &x) { return applyFunction(f, {x}, loc); };
  if (name == "to_list" && n == 1) return Opt(call.listOf(items));
  if (name == "count" && n == 1) return Opt(Value::number((int64_t)items.size(), loc));
  if (name == "reverse" && n == 1) return Opt(call.listOf(std::vector<Value>(items.rbegin(), items.rend())));
  if (name == "member?" && n == 2) {
    for (auto &x : items)
      if (sameTerm(x, args[1])) return Opt(boolean(true, loc));
    return Opt(boolean(false, loc));
  }
  if (name == "at" && (n == 2 || n == 3)) {
    if (args[1].kind != Value::Int) return error(call.argLoc(1), "Enum.at/2 expects an integer index");
    int64_t i = args[1].i < 0 ? args[1].i + (int64_t)items.size() : args[1].i;
    if (i < 0 || i >= (int64_t)items.size()) return Opt(n == 3 ? args[2] : Value::atomValue("nil", loc));
    return Opt(items[i]);
  }
  if ((name == "take" || name == "drop") && n == 2) {
    if (args[1].kind != Value::Int)
      return error(call.argLoc(1), fmt::format(FMT_STRING("Enum.{} expects a count"), name));
    int64_t size = (int64_t)items.size(), c = args[1].i;
    int64_t from = 0, to = size;
    if (name == "take") {
      if (c >= 0) to = std::min(c, size);
      else from = std::max<int64_t>(0, size + c);
    } else {
      if (c >= 0) from = std::min(c, size);
      else to = std::max<int64_t>(0, size + c);
    }
    return Opt(call.listOf(std::vector<Value>(items.begin() + from, items.begin() + to)));
  }
  if (name == "slice" && n == 2 && args[1].kind == Value::Range && !args[1].full && args[1].step > 0) {
    // Enum.slice(list, first..last//step): negative indices count from the
    // end; an empty range of indices gives [].
    int64_t size = (int64_t)items.size();
    int64_t first = args[1].i < 0 ? size + args[1].i : args[1].i;
    int64_t last = args[1].last < 0 ? size + args[1].last : args[1].last;
    std::vector<Value> out;
    first = std::max<int64_t>(first, 0);
    last = std::min(last, size - 1);
    for (int64_t k = first; k <= last; k += args[1].step) out.push_back(items[(size_t)k]);
    return Opt(call.listOf(out));
  }
  if (name == "slice" && n == 3 && args[1].kind == Value::Int && args[2].kind == Value::Int) {
    int64_t size = (int64_t)items.size();
    int64_t from = args[1].i < 0 ? std::max<int64_t>(0, size + args[1].i) : std::min(args[1].i, size);
    int64_t to = std::min(size, from + std::max<int64_t>(0, args[2].i));
    return Opt(call.listOf(std::vector<Value>(items.begin() + from, items.begin() + to)));
  }
  if (name == "concat" && n == 2) {
    NXC_TRY(other, call.elements(1));
    std::vector<Value> out = items;
    out.insert(out.end(), other.begin(), other.end());
    return Opt(call.listOf(out));
  }
  if ((name == "uniq" || name == "sort") && n == 1) {
    std::vector<Value> out;
    for (auto &x : items) {
      bool seen = false;
      for (auto &y : out) seen |= name == "uniq" && sameTerm(x, y);
      if (!seen) out.push_back(x);
    }
    if (name == "sort") {
      for (auto &x : out)
        if (x.kind != Value::Int && x.kind != Value::Float && x.kind != Value::Atom)
          return error(call.argLoc(0), "Enum.sort/1 at compile time sorts numbers or atoms");
      std::stable_sort(out.begin(), out.end(), [](const Value &a, const Value &b) {
        bool an = a.kind != Value::Atom, bn = b.kind != Value::Atom;
        if (an != bn) return an; // numbers before atoms, as Elixir orders terms
        return an ? a.asDouble() < b.asDouble() : a.atom < b.atom;
      });
    }
    return Opt(call.listOf(out));
  }
  if (name == "with_index" && n == 2 && args[1].kind == Value::Int) {
    std::vector<Value> out;
    for (size_t k = 0; k < items.size(); ++k)
      out.push_back(Value::tuple({items[k], Value::number((int64_t)k + args[1].i, loc)}, loc));
    return Opt(call.listOf(out));
  }
  if (name == "with_index" && n == 1) {
    std::vector<Value> out;
    for (size_t k = 0; k < items.size(); ++k)
      out.push_back(Value::tuple({items[k], Value::number((int64_t)k, loc)}, loc));
    return Opt(call.listOf(out));
  }
  if (name == "zip" && n == 1) {
    // A list of lists (or tuples) zipped into tuples, as long as the shortest.
    std::vector<std::vector<Value>> lists;
    for (auto &l : items) {
      if (l.kind != Value::List && l.kind != Value::Tuple)
        return error(call.argLoc(0), "Enum.zip/1 expects a list of lists, got an element " + describeValue(l));
      lists.push_back(l.elems);
    }
    size_t shortest = lists.empty() ? 0 : SIZE_MAX;
    for (auto &l : lists) shortest = std::min(shortest, l.size());
    std::vector<Value> out;
    for (size_t k = 0; k < shortest; ++k) {
      std::vector<Value> t;
      for (auto &l : lists) t.push_back(l[k]);
      out.push_back(Value::tuple(t, loc));
    }
    return Opt(call.listOf(out));
  }
  if (name == "zip" && n == 2) {
    NXC_TRY(other, call.enumerated(1));
    std::vector<Value> out;
    for (size_t k = 0; k < std::min(items.size(), other.size()); ++k)
      out.push_back(Value::tuple({items[k], other[k]}, loc));
    return Opt(call.listOf(out));
  }
  if ((name == "sum" || name == "product") && n == 1) {
    bool fl = false;
    double d = name == "sum" ? 0 : 1;
    int64_t i = name == "sum" ? 0 : 1;
    for (auto &x : items) {
      if (x.kind != Value::Int && x.kind != Value::Float)
        return error(call.argLoc(0),
                     fmt::format(FMT_STRING("Enum.{} expects numbers, got {}"), name, describeValue(x)));
      fl |= x.kind == Value::Float;
      d = name == "sum" ? d + x.asDouble() : d * x.asDouble();
      if (!fl && (name == "sum" ? __builtin_add_overflow(i, x.i, &i) : __builtin_mul_overflow(i, x.i, &i)))
        return error(loc, "integer overflow in a compile-time computation");
    }
    return Opt(fl ? Value::real(d, loc) : Value::number(i, loc));
  }
  if ((name == "max" || name == "min") && n == 1) {
    if (items.empty()) return error(loc, fmt::format(FMT_STRING("** (Enum.EmptyError) empty error in Enum.{}"), name));
    Value best = items[0];
    for (auto &x : items) {
      if ((x.kind != Value::Int && x.kind != Value::Float) || (best.kind != Value::Int && best.kind != Value::Float))
        return error(call.argLoc(0), fmt::format(FMT_STRING("Enum.{} at compile time compares numbers only"), name));
      if (name == "max" ? x.asDouble() > best.asDouble() : x.asDouble() < best.asDouble()) best = x;
    }
    return Opt(best);
  }
  if (name == "join" && (n == 1 || n == 2)) {
    std::string sep = n == 2 && args[1].kind == Value::String ? args[1].atom : "";
    std::string out;
    for (size_t k = 0; k < items.size(); ++k) {
      NXC_TRY(text, elixirToString(items[k], loc));
      out += (k ? sep : "") + text;
    }
    Value s;
    s.kind = Value::String;
    s.atom = out;
    s.loc = loc;
    return Opt(s);
  }
  if (n >= 2 && args[n - 1].kind != Value::Function) return Opt();
  if (name == "flat_map" && n == 2) {
    std::vector<Value> out;
    for (auto &x : items) {
      NXC_TRY(y, call1(args[1], x));
      if (y.kind != Value::List) return error(loc, "Enum.flat_map/2's function must return a list");
      out.insert(out.end(), y.elems.begin(), y.elems.end());
    }
    return Opt(call.listOf(out));
  }
  if (name == "each" && n == 2) {
    for (auto &x : items) NXC_CHECK(call1(args[1], x));
    return Opt(Value::atomValue("ok", loc));
  }
  if (name == "map" && n == 2) {
    std::vector<Value> out;
    for (auto &x : items) {
      NXC_TRY(y, call1(args[1], x));
      out.push_back(y);
    }
    return Opt(call.listOf(out));
  }
  if ((name == "filter" || name == "reject" || name == "all?" || name == "any?" || name == "find") && n == 2) {
    std::vector<Value> out;
    for (auto &x : items) {
      NXC_TRY(keep, call1(args[1], x));
      if (keep.kind == Value::Tensor)
        return error(loc, fmt::format(FMT_STRING("Enum.{}'s function returned a tensor; at compile time it must "
                                                 "return a boolean"),
                                      name));
      bool t = truthy(keep);
      if (name == "all?" && !t) return Opt(boolean(false, loc));
      if (name == "any?" && t) return Opt(boolean(true, loc));
      if (name == "find" && t) return Opt(x);
      if (t == (name == "filter")) out.push_back(x);
    }
    if (name == "all?") return Opt(boolean(true, loc));
    if (name == "any?") return Opt(boolean(false, loc));
    if (name == "find") return Opt(Value::atomValue("nil", loc));
    return Opt(call.listOf(out));
  }
  if (name == "zip_with" && n == 3) {
    NXC_TRY(other, call.enumerated(1));
    std::vector<Value> out;
    for (size_t k = 0; k < std::min(items.size(), other.size()); ++k) {
      NXC_TRY(y, applyFunction(args[2], {items[k], other[k]}, loc));
      out.push_back(y);
    }
    return Opt(call.listOf(out));
  }
  if (name == "reduce" && n == 3) {
    Value acc = args[1];
    for (auto &x : items) {
      NXC_TRY(next, applyFunction(args[2], {x, acc}, loc));
      acc = next;
    }
    return Opt(acc);
  }
  if (name == "scan" && (n == 2 || n == 3)) {
    // Enum.scan/2 starts from the first element, scan/3 from the accumulator.
    std::vector<Value> out;
    size_t start = 0;
    Value acc;
    if (n == 3) {
      acc = args[1];
    } else {
      if (items.empty()) return Opt(call.listOf({}));
      acc = items[0];
      out.push_back(acc);
      start = 1;
    }
    const Value &fn = args[n - 1];
    for (size_t k = start; k < items.size(); ++k) {
      NXC_TRY(next, applyFunction(fn, {items[k], acc}, loc));
      acc = next;
      out.push_back(acc);
    }
    return Opt(call.listOf(out));
  }
  if (name == "map_reduce" && n == 3) {
    Value acc = args[1];
    std::vector<Value> out;
    for (auto &x : items) {
      NXC_TRY(r, applyFunction(args[2], {x, acc}, loc));
      if (r.kind != Value::Tuple || r.elems.size() != 2)
        return error(loc, "Enum.map_reduce/3's function must return a {mapped, accumulator} tuple");
      out.push_back(r.elems[0]);
      acc = r.elems[1];
    }
    return Opt(Value::tuple({call.listOf(out), acc}, loc));
  }
  return Opt();
  return Opt();
}

//===----------------------------------------------------------------------===//
// Map keys and pairs, as Map, Enum and for see them
//===----------------------------------------------------------------------===//

std::optional<std::string> storedMapKey(const Value &key) {
  if (key.kind == Value::Atom) return key.atom;
  if (key.kind == Value::String) return ast::kStringKeyMark + key.atom;
  return std::nullopt;
}

Value mapKeyTerm(const std::string &stored, const Loc &loc) {
  Value key = Value::atomValue(ast::keyText(stored), loc);
  if (ast::isStringKey(stored)) key.kind = Value::String;
  return key;
}

std::vector<Value> mapPairs(const Value &map, const Loc &loc) {
  std::vector<size_t> order(map.keys.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ast::mapKeyLess(map.keys[a], map.keys[b]); });
  std::vector<Value> pairs;
  for (size_t k : order) pairs.push_back(Value::tuple({mapKeyTerm(map.keys[k], loc), map.elems[k]}, loc));
  return pairs;
}

Result<Value> mapOfPairs(Value into, const std::vector<Value> &pairs, const Loc &loc) {
  for (auto &v : pairs) {
    std::optional<std::string> key;
    if (v.kind == Value::Tuple && v.elems.size() == 2) key = storedMapKey(v.elems[0]);
    if (!key)
      return error(v.loc.valid() ? v.loc : loc,
                   "a map is built from {key, value} tuples with atom or string keys at compile time, got " +
                       describeValue(v));
    auto it = std::find(into.keys.begin(), into.keys.end(), *key);
    if (it != into.keys.end()) {
      into.elems[it - into.keys.begin()] = v.elems[1];
    } else {
      into.keys.push_back(*key);
      into.elems.push_back(v.elems[1]);
      into.keyLocs.push_back(loc);
    }
  }
  return into;
}

//===----------------------------------------------------------------------===//
// The source of a captured function, for a struct's keep field
//===----------------------------------------------------------------------===//

std::optional<std::string> Tracer::functionSource(const Value &v) {
  if (v.kind != Value::Function || !v.fn || v.fn->kind != ExprKind::Fn || v.fn->children.empty()) return std::nullopt;
  const Expr &body = *v.fn->children.back();
  size_t arity = v.fn->children.size() - 1;
  if (body.kind != ExprKind::Call) return std::nullopt;
  std::string module = body.module;
  if (module.empty() && v.fnModule) module = v.fnModule->name;
  if (module.empty()) return std::nullopt;
  // The arguments: the capture's own &N, lists and tuples of them, and any
  // other expression of the captured terms alone (`p`, `opts[:p]`) by its
  // value now, as the closure would compute it.
  std::function<bool(const Expr &)> usesParams = [&](const Expr &x) {
    if (x.kind == ExprKind::Var && !x.name.empty() && x.name[0] == '&') return true;
    return std::any_of(x.children.begin(), x.children.end(), [&](auto &c) { return usesParams(*c); });
  };
  std::function<bool(const Value &)> term = [&](const Value &x) {
    if (x.kind == Value::Tensor || x.kind == Value::Vectorized || x.kind == Value::Function) return false;
    return std::all_of(x.elems.begin(), x.elems.end(), term);
  };
  std::function<std::optional<std::string>(const Expr &)> arg = [&](const Expr &e) -> std::optional<std::string> {
    if (!usesParams(e)) {
      Env scope(v.captured.get());
      auto value = eval(e, scope);
      if (!value || !term(*value)) return std::nullopt;
      return inspectValue(*value);
    }
    if (e.kind == ExprKind::Var) return e.name;
    if (e.kind != ExprKind::List && e.kind != ExprKind::Tuple) return std::nullopt;
    std::vector<std::string> items;
    for (auto &c : e.children) {
      auto item = c->kind == ExprKind::Pair ? arg(*c->children[0]) : arg(*c);
      if (!item) return std::nullopt;
      items.push_back(c->kind == ExprKind::Pair ? atomText(c->name) + ": " + *item : *item);
    }
    bool list = e.kind == ExprKind::List;
    return fmt::format(FMT_STRING("{}{}{}"), list ? "[" : "{", fmt::join(items, ", "), list ? "]" : "}");
  };
  std::vector<std::string> args;
  bool plain = body.children.size() == arity;
  for (size_t k = 0; k < body.children.size(); ++k) {
    auto a = arg(*body.children[k]);
    if (!a) return std::nullopt;
    plain = plain && *a == fmt::format(FMT_STRING("&{}"), k + 1);
    args.push_back(*a);
  }
  if (plain) return fmt::format(FMT_STRING("&{}.{}/{}"), module, body.name, arity);
  return fmt::format(FMT_STRING("&{}.{}({})"), module, body.name, fmt::join(args, ", "));
}

} // namespace nxc::sema
