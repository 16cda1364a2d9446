//===- graph.cpp - fuzz the JSON graph reader -------------------------------===//
//
// Graphs that read back are written again, and what is written must read
// back to the same text (the format's fixed point).
//
//===----------------------------------------------------------------------===//
#include "FuzzTarget.h"

#include "nxc/Graph/GraphJson.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto file = nxc::readGraphJson(nxc::fuzz::source(data, size, "fuzz.json"));
  nxc::fuzz::checkResult(file);
  if (!file) return 0;
  std::vector<const nxc::Graph *> graphs;
  for (auto &g : file->functions) graphs.push_back(&g);
  auto written = nxc::writeGraphJson(graphs, "");
  if (!written) std::abort();
  auto again = nxc::readGraphJson(nxc::fuzz::source(reinterpret_cast<const uint8_t *>(written->json.data()),
                                                    written->json.size(), "again.json"));
  if (!again) std::abort();
  std::vector<const nxc::Graph *> graphs2;
  for (auto &g : again->functions) graphs2.push_back(&g);
  auto rewritten = nxc::writeGraphJson(graphs2, "");
  if (!rewritten || rewritten->json != written->json) std::abort();
  return 0;
}
