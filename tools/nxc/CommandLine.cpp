//===- CommandLine.cpp - the subcommands' options and help -----------------===//
//
// What each subcommand takes and the help that teaches it; nxc.cpp parses
// and dispatches.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "nxc/Pipeline/Compiler.h"

#include <CLI/CLI.hpp>

namespace nxc::cli {

CLI::App *addAotCommand(CLI::App &app, AotOptions &o) {
  CLI::App *aotCmd =
      app.add_subcommand("aot", "Compile defn functions to a C header, a shared object and static libraries");
  aotCmd
      ->add_option("input", o.input,
                   "A .nx/.ex file holding defmodule ... defn ... end, a directory of them (a library's lib/), or "
                   "a .json graph (docs/graph-format.md)")
      ->required();
  aotCmd->add_option("--with", o.with,
                     "More source files or directories whose modules the input calls (a library's other files, "
                     "as Axon's activations.ex imports Axon.Shared from shared.ex). Repeatable");
  aotCmd
      ->add_option(
          "--fn", o.fns,
          "A function and its argument templates: 'softmax(f32[100])', 'predict({f32[784,128], f32[128]}, "
          "f32[30,784])' (a tuple), 'predict(%{w: f32[784,10], b: f32[10]}, f32[30,784])' (a map, its "
          "leaves in key order), 'fast=softmax(f32[100])' to choose the C name, 'celu(f32[4], alpha: 2.0)' "
          "with options (a trailing keyword list, the call's last argument, fixed at compile time). "
          "Repeatable. For a .json graph the name alone (the graph fixes the types), and every function when left out.")
      ->allow_extra_args(false); // one value per --fn: a stray argument is not taken for a signature
  aotCmd
      ->add_option("-o,--output", o.outDir,
                   "Output directory (created if needed); with --emit json, the "
                   "graph file to write (FILE.json, large constants in FILE.npz)")
      ->default_str(".");
  aotCmd->add_option("--name", o.name, "Module name: prefix of C names and file names (default: the input's stem)");
  aotCmd->add_option("--target", o.triple, "LLVM target triple (default: the host)");
  aotCmd->add_option("--cpu", o.cpu,
                     "Target CPU, or for x86-64 a comma-separated list of ISA variants, best first "
                     "('native,x86-64-v3,x86-64', 'znver4,x86-64-v2'); see below for the default");
  aotCmd->add_option("--features", o.features, "Extra target features, as in '+avx2,-avx512f'");
  aotCmd->add_option("--device", o.device, "cpu (default) or cuda (NVIDIA GPUs; see below)")->default_str("cpu");
  aotCmd->add_option("--gpu", o.gpu,
                     std::string("With --device cuda: the CUDA architectures to build cubins for, as in "
                                 "'sm_80,sm_90' (default: ") +
                         kDefaultGpuArchs + ")");
  aotCmd->add_option("--cuda-path", o.cudaPath,
                     "With --device cuda: the CUDA toolkit whose ptxas and fatbinary make the cubins (default: "
                     "$CUDA_PATH, then /usr/local/cuda)");
  aotCmd->add_option("--emit", o.emit,
                     "Print one stage to stdout instead of writing files: ast, expr, json (the traced graph, "
                     "docs/graph-format.md), nx, linalg, bufferized, llvm-dialect, llvm, asm; with --device cuda "
                     "also gpu (launches and kernels) and ptx");
  aotCmd->add_option("--stack-workspace-limit", o.stackWorkspaceLimit,
                     "Largest workspace (bytes) FN(...) may keep on the stack; larger ones only get "
                     "FN_with_workspace (default: 65536 with an OS, 0 on bare metal)");
  aotCmd
      ->add_option("--threads", o.threads,
                   "The most threads one call may use (default 1: no pool). Above 1, large parallel loops run "
                   "on a thread pool inside the module, and the workspace holds each thread's temporaries; see "
                   "below. CPU code on targets with an OS only")
      ->check(CLI::Range(1, 256));
  aotCmd
      ->add_option("--min-parallel-work", o.minParallelWork,
                   "With --threads: the least estimated work (scalar operations, a transcendental function "
                   "counting 16) of a loop that runs on the pool (default 65536; 0 sends every parallel loop "
                   "there)")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 50));
  aotCmd->add_flag("--packed-entries", o.packedEntries,
                   "Also export FN_packed(void **args) per function: args holds FN_with_workspace's arguments in "
                   "order (inputs, outputs, workspace), for callers that cannot call a C prototype (a NIF, dlsym)");
  aotCmd->add_option(
      "--nif", o.nifModule,
      "Make libMODULE.so also an Erlang NIF library for the Erlang module given ('Elixir.MNIST.Compiled'): "
      "the BEAM loads it with erlang:load_nif/2 from that module and calls __nxc_call__(Name, Inputs); "
      "no other native code is needed where it runs (the Elixir package's import_aot uses it). Implies "
      "--packed-entries; CPU code on targets with an OS");
  aotCmd->add_option("-O", o.optLevel, "Optimization level 0-3 (default 3)")->check(CLI::Range(0, 3));
  aotCmd->footer(
      "Writes OUTDIR/MODULE.h, OUTDIR/libMODULE.so, OUTDIR/libMODULE.a, OUTDIR/libnxrt.a, OUTDIR/MODULE.json\n"
      "(and the runtime's nxrt.h / nxrt.c).\n\n"
      "Templates: f32[100] (rank 1), f32[30,784] or f32[30][784] (rank 2), s32[] (scalar),\n"
      "{f32[2], f32[2]} (tuple), f32[batch: 30, 10] (named axes). Types: s8 s16 s32 s64 u8 u16 u32 u64\n"
      "f8 (E5M2) f8_e4m3fn f16 bf16 f32 f64 pred.\n\n"
      "Constants: @weights.npy bakes a tensor into the library's read-only data, @params.npz a tuple of the\n"
      "archive's arrays in order, @params.bin (any other name) the container a file Nx.serialize/2 wrote\n"
      "(tuples, maps, structs); the argument disappears from the C signature and the header states the\n"
      "bytes (MODULE_FUNCTION_CONSTANT_BYTES). Files carry no axis names: declare them after a colon, as in\n"
      "'predict(@params.npz:{f32[input: 784, layer: 128], f32[layer: 128]}, f32[30,784])' (the file's types\n"
      "and shapes must match the declaration).\n\n"
      "CPU variants (x86-64 with an OS; aarch64 Linux with a --cpu list such as 'neoverse-v1,cortex-a76,\n"
      "generic'): every function is compiled once per --cpu entry, and the library\n"
      "runs the first variant the running CPU supports (checked once, at load time; MODULE_cpu_variant()\n"
      "names it; $NXC_CPU_VARIANT=NAME runs variant NAME instead, where the CPU supports it). A CPU\n"
      "below every variant gets NXRT_ERROR_UNSUPPORTED_CPU (3), never an illegal instruction. Without --cpu a host "
      "build holds the build machine's CPU, x86-64-v3 and the x86-64\n"
      "baseline, so it runs everywhere and stays fast where it was built; one --cpu gives one (checked)\n"
      "variant. Other architectures get one version for --cpu (default: the host CPU for the host,\n"
      "generic otherwise; riscv64 Linux: rv64gc). nxc jit always compiles for the running CPU.\n\n"
      "CUDA (--device cuda): the same files, for NVIDIA GPUs; no GPU is needed to compile. The library\n"
      "embeds a cubin per --gpu architecture and the newest one's PTX (ptxas and fatbinary from the CUDA\n"
      "toolkit at --cuda-path, $CUDA_PATH or /usr/local/cuda; without one, PTX only). Per function:\n"
      "FN(d_x, d_result) on device pointers, FN_on_stream(..., workspace, stream), FN_host(x, result) on\n"
      "host pointers; the library needs only the driver (libcuda.so.1, opened at the first call) and\n"
      "returns NXRT_ERROR_NO_DEVICE (4) where there is none. --device cuda-emulated runs the same kernels\n"
      "on the CPU, thread by thread (for testing).\n\n"
      "Threads (--threads N): the large parallel loops of each call (row loops, blocks of a dot, the\n"
      "outer loop of a big element-wise op or reduction) run on a pool of threads inside the library;\n"
      "the rest stays on the calling thread, and results are the same at every thread count. The\n"
      "count in effect is $NXC_NUM_THREADS, else the CPUs the process may use, at most N;\n"
      "MODULE_set_threads(n) changes it, MODULE_threads() reads it, MODULE_stop_threads() joins the\n"
      "workers. The header says which functions use the pool. Link the .a with -lpthread.\n\n"
      "Large outputs (x86-64): an output of 8 MiB or more computed element-wise is written with\n"
      "streaming stores when it starts a 64-byte boundary and the call's tensors exceed 3/4 of the\n"
      "CPU's largest cache (read once with cpuid; $NXC_CACHE_BYTES sets it instead). Allocate large\n"
      "outputs with aligned_alloc(64, ...) to get it.\n\n"
      "Graphs: --emit json prints the traced functions as a JSON graph (or writes -o FILE.json, with\n"
      "constants of more than 256 elements in FILE.npz); 'nxc aot FILE.json' compiles such a graph as\n"
      "it would the source. A --fn for a graph may give templates: they must match the graph's, except\n"
      "@file templates, which bake the parameter into the library.\n\n"
      "C names: MODULE_FUNCTION; a function compiled at several signatures gets MODULE_FUNCTION_<sig>,\n"
      "e.g. mymod_softmax_f32_1000 and mymod_softmax_s32_5; 'fast=softmax(...)' gives MODULE_fast.\n\n"
      "Example:\n"
      "  nxc aot softmax.nx --fn 'softmax(f32[100])' --name mymod -o out/\n"
      "  cc app.c -Iout -Lout -lmymod -o app");

  return aotCmd;
}

CLI::App *addJitCommand(CLI::App &app, JitOptions &o) {
  CLI::App *jitCmd = app.add_subcommand("jit", "Compile a defn for the given arguments and run it now");
  jitCmd
      ->add_option("input", o.input,
                   "A .nx/.ex file holding defmodule ... defn ... end, a directory of them, or a .json graph")
      ->required();
  jitCmd->add_option("--with", o.with, "More source files or directories whose modules the input calls. Repeatable");
  jitCmd
      ->add_option("--fn", o.fn,
                   "The function to run: NAME or Module.NAME, with its options in parentheses if it takes any, as "
                   "in 'Axon.Activations.celu(alpha: 2.0)' (a keyword list, the call's last argument)")
      ->required();
  // The arguments are taken verbatim (CLI11 would split '[1, 2]' into a list).
  jitCmd->allow_extras();
  jitCmd->positionals_at_end(false);
  jitCmd->add_option("-o,--output", o.output, "Write the result to OUT.npy (a tensor) or OUT.npz (a tuple)");
  jitCmd->add_flag("--bench", o.bench, "Run repeatedly and print a Benchee-style table");
  jitCmd->add_option("--warmup", o.warmupSeconds, "Warm-up seconds before measuring (default 0.5)");
  jitCmd->add_option("--time", o.benchSeconds, "Seconds to measure (default 2)");
  jitCmd
      ->add_option("--threads", o.threads,
                   "As for aot: the most threads the call may use (default 1); $NXC_NUM_THREADS or the "
                   "available CPUs choose the count up to that")
      ->check(CLI::Range(1, 256));
  jitCmd->add_flag("--no-cache", o.noCache, "Do not read or write the on-disk cache of compiled code");
  jitCmd
      ->add_option("--device", o.device,
                   "cpu (default), or cuda-emulated: compile through the CUDA back end's GPU mapping and run its\n"
                   "kernels on this CPU, one block and one thread at a time (slow; for testing that mapping)")
      ->default_str("cpu");
  jitCmd->add_flag("-v,--verbose", o.verbose, "Say whether the code was compiled or taken from the cache");
  jitCmd->footer(
      "ARG...: FILE.npy (a tensor), FILE.npz (a tuple, arrays in order), a file Nx.serialize/2 wrote (its\n"
      "container), or a literal as Nx writes tensors:\n"
      "3.5, '[[1, 2], [3, 4]]', 'f32:[1, 2, 3]'. Integer literals are s32 and floats f32, as in Nx; a prefix\n"
      "sets the type: 'u8:[1, 2]'.\n"
      "Tuple parameters take their leaves from consecutive arguments, depth-first (or from one .npz).\n"
      "A map parameter comes from one .npz with a map template, entries by name:\n"
      "'params.npz:%{w: f32[784, 10], b: f32[10]}'. A map result prints as Elixir prints it; -o OUT.npz\n"
      "stores its leaves by path (w, layer.0).\n"
      "Files carry no axis names; give them with a template after the file, as in\n"
      "'params.npz:{f32[input: 784, layer: 128], f32[layer: 128]}' (types and shapes must match).\n"
      "Put negative literals after --, as in: nxc jit f.nx --fn add -- -1 2\n"
      "Compiled code is cached per source, function, argument types and shapes, target and nxc version,\n"
      "in memory and in $XDG_CACHE_HOME/nxc (default ~/.cache/nxc).\n\n"
      "Example:\n"
      "  nxc jit softmax.nx --fn MyDefn.softmax '[1.0, 2.0, 3.0]'\n"
      "  nxc jit softmax.nx --fn MyDefn.softmax x.npy -o y.npy\n"
      "  nxc jit softmax.nx --fn MyDefn.softmax x.npy --bench");

  return jitCmd;
}

CLI::App *addReplCommand(CLI::App &app, ReplOptions &o) {
  CLI::App *replCmd = app.add_subcommand("repl", "An interactive session: call and define defns, print like Nx");
  replCmd->add_option("input", o.input, "A .nx file whose modules' functions are callable");
  replCmd->add_flag("--no-cache", o.noCache, "Do not use the on-disk cache of compiled code");
  replCmd->footer("Type :help in the session for what an input may be. An input that fails is reported and "
                  "changes nothing; the session goes on. With stdin not a terminal (a script), the exit status "
                  "is 1 if any input failed, 0 otherwise.");

  return replCmd;
}

} // namespace nxc::cli
