//===- GraphJson.h - traced graphs as JSON files ----------------*- C++ -*-===//
//
// The serialized form of the typed graph Sema produces (docs/graph-format.md,
// docs/graph-format.schema.json): `nxc aot FILE.nx --emit json` writes it,
// and `nxc aot GRAPH.json` / `nxc jit GRAPH.json` read it back into the same
// Graph that tracing gives, so both inputs share the rest of the pipeline.
//
// The reader checks the file's structure (fields, node references, scopes of
// control-flow regions, constant data) and reports every error at the JSON
// pointer of the offending value; the ops' own type rules are checked when
// the graph becomes nx dialect (the dialect's verifiers), at the same pointers.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_GRAPH_GRAPHJSON_H
#define NXC_GRAPH_GRAPHJSON_H

#include "nxc/Frontend/Diagnostics.h"
#include "nxc/Sema/Graph.h"
#include "nxc/Tensor/HostTensor.h"

#include <memory>
#include <string>
#include <vector>

namespace nxc {

/// The format name and version a graph file declares and this nxc writes.
constexpr const char *kGraphFormat = "nxc-graph";
constexpr int kGraphFormatVersion = 1;
/// Constants with more elements than this go to the .npz beside the graph
/// (when the writer is given one).
constexpr int64_t kGraphInlineConstantLimit = 256;
/// The largest graph file read (constants belong in .npz files beside it).
constexpr int64_t kGraphFileLimit = int64_t(256) << 20;

/// A serialized graph: the JSON text, and the constants stored beside it
/// (entries of the .npz named by `constantsFile` in writeGraphJson).
struct GraphJson {
  std::string json;
  std::vector<NpzEntry> constants;
};

/// Serializes `graphs` (one function each). With a non-empty `constantsFile`
/// (a file name, written into the graph as given), constants of more than
/// kGraphInlineConstantLimit elements are referenced as its entries
/// (`c<node>_<function>`), otherwise every constant is inline.
Result<GraphJson> writeGraphJson(const std::vector<const Graph *> &graphs, const std::string &constantsFile);

/// A graph file read back: one Graph per function.
struct GraphFile {
  std::vector<Graph> functions;
  /// The graph's text and the bytes of the data files its constants came
  /// from: what a digest of the inputs (the manifest's, the JIT cache's) covers.
  std::string contents;
};

/// Parses a graph file. Constant files are resolved relative to the graph
/// file's directory. Errors carry the JSON pointer of the bad value.
Result<GraphFile> readGraphJson(std::shared_ptr<const SourceFile> file);

/// Reads and parses the graph file at `path`; a file larger than
/// kGraphFileLimit is refused before it is read.
Result<GraphFile> loadGraphFile(const std::string &path);

/// "softmax(f32[1000], s32)": the signature a graph was traced at.
std::string graphSignature(const Graph &g);

} // namespace nxc

#endif // NXC_GRAPH_GRAPHJSON_H
