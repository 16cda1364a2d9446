//===- sema.cpp - fuzz Sema on parsed programs ------------------------------===//
//
// Every defn of a program that parses is traced with f32[3] for each
// parameter, and its graph printed.
//
//===----------------------------------------------------------------------===//
#include "FuzzTarget.h"

#include "nxc/Frontend/Parser.h"
#include "nxc/Sema/Sema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto file = nxc::parseFile(nxc::fuzz::source(data, size, "fuzz.nx"));
  if (!file) return 0;
  for (auto &m : file->modules)
    for (auto &f : m.functions) {
      if (f.params.size() > 6) continue;
      nxc::Signature sig;
      sig.module = m.name;
      sig.function = f.name;
      for (size_t i = 0; i < f.params.size(); ++i) {
        nxc::Template t;
        t.tensor = nxc::TensorType{nxc::ElemType::f32(), {3}, {}};
        sig.args.push_back(t);
      }
      auto graph = nxc::trace(*file, sig);
      nxc::fuzz::checkResult(graph);
      if (graph) (void)graph->print();
    }
  return 0;
}
