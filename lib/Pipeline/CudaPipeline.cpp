//===- CudaPipeline.cpp - the CUDA back end -------------------------------===//
//
// From linalg on tensors to a host object that carries its GPU code:
//
//  1. bufferization as for CPUs, but every temporary in the workspace (device
//     memory; nothing on the host stack);
//  2. nxc-map-to-gpu (lib/Transforms/MapToGpu.cpp) puts every op that touches
//     memory in a gpu.launch; gpu-kernel-outlining makes the kernels, which
//     are then gathered into one gpu.module (one binary per module);
//  3. NVVM, then LLVM's NVPTX back end makes PTX for each --gpu architecture
//     (gpu-module-to-binary, in process);
//  4. with a CUDA toolkit, ptxas makes a cubin per architecture and
//     fatbinary packs them with the newest architecture's PTX (the forward-
//     compatible fallback); without one, the oldest architecture's PTX alone
//     is embedded and the driver compiles it at load time (a warning says so);
//  5. host code: the functions launch their kernels on a stream they are
//     given; exported entries (device pointers, device pointers on a stream,
//     host pointers) call the CUDA loader (runtime/cuda_loader.c, linked in
//     as bitcode and internalized), which opens libcuda.so.1 at first use.
//
//===----------------------------------------------------------------------===//
#include "PipelineSupport.h"
#include "nxc/Target/ABI.h"
#include "nxc/Target/Artifacts.h"
#include "nxc/Target/Embedded.h"
#include "nxc/Target/ObjectEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringSet.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <fmt/format.h>

#include <cstdlib>
#include <set>

namespace nxc {
namespace detail {

/// Bufferization for the GPU: as for CPUs, without stack temporaries (the
/// host stack is not device memory), and no bytes shared between temporaries
/// (a fused kernel runs the ops of many rows at once).
const char *const kBufferizeForGpu =
    "func.func(nxc-distinct-results,nxc-separate-empty-tensors),"
    "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map "
    "allow-return-allocs-from-loops},"
    "canonicalize,"
    "buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,"
    "nxc-allocs-to-workspace{share=false},nxc-copies-to-linalg,canonicalize";

const char *const kEmulatedGpu =
    "func.func(linalg-generalize-named-ops),nxc-map-to-gpu,func.func(nxc-emulate-gpu),canonicalize,cse";

namespace {

/// Launches and outlined kernels (printed by --emit=gpu).
const char *kToGpu = "func.func(linalg-generalize-named-ops),nxc-map-to-gpu,gpu-kernel-outlining,canonicalize,cse";

/// The architecture's number: "sm_90" -> 90; 0 if malformed.
int smNumber(const std::string &arch) {
  if (arch.rfind("sm_", 0) != 0 || arch.size() < 5) return 0;
  int n = 0;
  for (size_t i = 3; i < arch.size(); ++i) {
    if (!std::isdigit((unsigned char)arch[i])) return 0;
    n = n * 10 + (arch[i] - '0');
  }
  return n;
}

/// The PTX version nxc emits for an architecture: 8.0 up to sm_90 (CUDA 12.0
/// drivers), then the first version that knows the architecture.
const char *ptxFeature(int sm) {
  if (sm <= 90) return "+ptx80";
  if (sm <= 103) return "+ptx86";
  return "+ptx87";
}

Result<std::vector<std::string>> gpuArchitectures(const TargetOptions &target) {
  std::vector<std::string> archs = target.gpuArchs;
  if (archs.empty()) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(kDefaultGpuArchs).split(parts, ',');
    for (auto p : parts) archs.push_back(p.str());
  }
  static const std::set<int> known = {75, 80, 86, 87, 89, 90, 100, 101, 103, 120, 121};
  std::vector<std::string> out;
  for (auto &a : archs) {
    int sm = smNumber(a);
    if (!known.count(sm))
      return error(Loc{}, fmt::format(FMT_STRING("unknown CUDA architecture '{}' in --gpu; expected a list of sm_75, "
                                                 "sm_80, sm_86, sm_87, sm_89, sm_90, sm_100, sm_101, sm_103, sm_120, "
                                                 "sm_121"),
                                      a));
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  }
  std::sort(out.begin(), out.end(), [](auto &x, auto &y) { return smNumber(x) < smNumber(y); });
  return out;
}

/// Gathers the kernels of every gpu.module into the first one, so a module
/// ships one GPU binary (one load, one ptxas run per architecture).
void gatherKernels(mlir::ModuleOp module) {
  auto gpuModules = llvm::to_vector(module.getOps<mlir::gpu::GPUModuleOp>());
  if (gpuModules.empty()) return;
  auto *ctx = module.getContext();
  mlir::gpu::GPUModuleOp first = gpuModules.front();
  // Each kernel gets a name unique in the module: "module::func" -> new name.
  llvm::StringMap<std::string> kernelOf;
  for (auto gm : gpuModules)
    for (auto fn : gm.getOps<mlir::gpu::GPUFuncOp>()) {
      std::string newName = fmt::format(FMT_STRING("{}_{}"), fn.getName().str(), kernelOf.size());
      kernelOf[gm.getName().str() + "::" + fn.getName().str()] = newName;
    }
  module.walk([&](mlir::gpu::LaunchFuncOp launch) {
    auto it = kernelOf.find(launch.getKernelModuleName().str() + "::" + launch.getKernelName().str());
    if (it != kernelOf.end())
      launch.setKernelAttr(
          mlir::SymbolRefAttr::get(ctx, "nxc_kernels", {mlir::FlatSymbolRefAttr::get(ctx, it->second)}));
  });
  // Globals the outlining copied into several modules are the same symbol of
  // the host module: keep one copy.
  llvm::StringSet<> present;
  for (auto &op : first.getBody()->getOperations())
    if (auto sym = llvm::dyn_cast<mlir::SymbolOpInterface>(op)) present.insert(sym.getName());
  for (auto gm : gpuModules) {
    for (auto fn : llvm::to_vector(gm.getOps<mlir::gpu::GPUFuncOp>())) {
      fn.setName(kernelOf[gm.getName().str() + "::" + fn.getName().str()]);
      if (gm != first) fn->moveBefore(&first.getBody()->back());
    }
    if (gm == first) continue;
    for (auto &op : llvm::make_early_inc_range(gm.getBody()->getOperations())) {
      auto sym = llvm::dyn_cast<mlir::SymbolOpInterface>(op);
      if (!sym || !present.insert(sym.getName()).second) continue;
      op.moveBefore(&first.getBody()->back());
    }
  }
  for (auto gm : gpuModules)
    if (gm != first) gm.erase();
  first.setName("nxc_kernels");
}

/// Math the GPU does in an instruction or two becomes bit operations
/// (absolute value, copysign) or that PTX instruction (square root, fma,
/// rounding), instead of calls to libdevice, which only a CUDA toolkit
/// provides. f16/bf16 keep the generic path.
void nativeMath(mlir::ModuleOp module) {
  llvm::SmallVector<mlir::Operation *> ops;
  module.walk([&](mlir::gpu::GPUModuleOp gm) {
    gm.walk([&](mlir::Operation *op) {
      if (llvm::isa<mlir::math::AbsFOp, mlir::math::CopySignOp, mlir::math::SqrtOp, mlir::math::FmaOp,
                    mlir::math::FloorOp, mlir::math::CeilOp, mlir::math::TruncOp, mlir::math::RoundEvenOp>(op) &&
          (op->getResult(0).getType().isF32() || op->getResult(0).getType().isF64()))
        ops.push_back(op);
    });
  });
  for (mlir::Operation *op : ops) {
    mlir::OpBuilder b(op);
    mlir::Location l = op->getLoc();
    mlir::ValueRange in = op->getOperands();
    mlir::Value r;
    auto ft = llvm::cast<mlir::FloatType>(op->getResult(0).getType());
    mlir::Type it = b.getIntegerType(ft.getWidth());
    auto bits = [&](mlir::Value v) { return mlir::arith::BitcastOp::create(b, l, it, v).getResult(); };
    auto sign = [&](bool on) {
      llvm::APInt m = llvm::APInt::getSignMask(ft.getWidth());
      return mlir::arith::ConstantOp::create(b, l, b.getIntegerAttr(it, on ? m : ~m)).getResult();
    };
    if (llvm::isa<mlir::math::AbsFOp>(op)) {
      r = mlir::arith::BitcastOp::create(b, l, ft, mlir::arith::AndIOp::create(b, l, bits(in[0]), sign(false)));
    } else if (llvm::isa<mlir::math::CopySignOp>(op)) {
      mlir::Value magnitude = mlir::arith::AndIOp::create(b, l, bits(in[0]), sign(false));
      mlir::Value s = mlir::arith::AndIOp::create(b, l, bits(in[1]), sign(true));
      r = mlir::arith::BitcastOp::create(b, l, ft, mlir::arith::OrIOp::create(b, l, magnitude, s));
    }
    else {
      // One PTX instruction, as inline assembly (the NVVM conversion would
      // turn the LLVM intrinsics into libdevice calls).
      bool f64 = ft.getWidth() == 64;
      const char *ty = f64 ? "f64" : "f32";
      std::string instr = llvm::isa<mlir::math::SqrtOp>(op)    ? fmt::format(FMT_STRING("sqrt.rn.{}"), ty)
                          : llvm::isa<mlir::math::FmaOp>(op)   ? fmt::format(FMT_STRING("fma.rn.{}"), ty)
                          : llvm::isa<mlir::math::FloorOp>(op) ? fmt::format(FMT_STRING("cvt.rmi.{0}.{0}"), ty)
                          : llvm::isa<mlir::math::CeilOp>(op)  ? fmt::format(FMT_STRING("cvt.rpi.{0}.{0}"), ty)
                          : llvm::isa<mlir::math::TruncOp>(op) ? fmt::format(FMT_STRING("cvt.rzi.{0}.{0}"), ty)
                                                               : fmt::format(FMT_STRING("cvt.rni.{0}.{0}"), ty);
      std::string operands, constraints = f64 ? "=d" : "=f";
      for (size_t i = 0; i < in.size(); ++i) {
        operands += fmt::format(FMT_STRING(", ${}"), i + 1);
        constraints += f64 ? ",d" : ",f";
      }
      r = mlir::LLVM::InlineAsmOp::create(b, l, ft, in, fmt::format(FMT_STRING("{} $0{};"), instr, operands),
                                          constraints, false, false, mlir::LLVM::tailcallkind::TailCallKind::None,
                                          mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr())
              .getResult(0);
    }
    op->getResult(0).replaceAllUsesWith(r);
    op->erase();
  }
}

/// The libdevice functions a PTX text declares but does not define
/// (`.extern .func (.param ...) __nv_exp(...)`).
std::vector<std::string> missingFunctions(const std::string &ptx) {
  std::vector<std::string> names;
  for (size_t p = ptx.find(".extern .func"); p != std::string::npos; p = ptx.find(".extern .func", p + 1)) {
    std::string declaration = ptx.substr(p, ptx.find(';', p) - p);
    size_t name = declaration.find("__nv_");
    if (name != std::string::npos)
      names.push_back(declaration.substr(name, declaration.find_first_of("( \n", name) - name));
  }
  return names;
}

/// The device lowering up to PTX, and the host code's lowering to LLVM.
std::string lowerPipeline(const std::vector<std::string> &archs, const std::string &toolkit) {
  std::string p = ""
                  "convert-nvgpu-to-nvvm,convert-vector-to-scf,lower-affine,convert-scf-to-cf,convert-nvvm-to-llvm,"
                  "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},expand-strided-metadata,";
  for (auto &a : archs)
    p += fmt::format(FMT_STRING("nvvm-attach-target{{chip={} features={} O=3}},"), a, ptxFeature(smNumber(a)));
  p += "lower-affine,arith-expand,convert-index-to-llvm,canonicalize,cse,"
       "gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1},canonicalize,cse,reconcile-unrealized-casts),"
       "gpu-to-llvm{use-bare-pointers-for-host=1 use-bare-pointers-for-kernels=1},finalize-memref-to-llvm,"
       "convert-arith-to-llvm,convert-cf-to-llvm,gpu-module-to-binary{format=isa" +
       (toolkit.empty() ? std::string() : " toolkit=" + toolkit) + "},convert-math-to-llvm,"
       "convert-ub-to-llvm,canonicalize,cse,reconcile-unrealized-casts";
  return p;
}

/// The PTX of each architecture, from the binary gpu-module-to-binary made.
std::vector<std::pair<std::string, std::string>> ptxByArch(mlir::gpu::BinaryOp binary) {
  std::vector<std::pair<std::string, std::string>> out;
  for (mlir::Attribute a : binary.getObjects()) {
    auto object = llvm::cast<mlir::gpu::ObjectAttr>(a);
    auto target = llvm::cast<mlir::NVVM::NVVMTargetAttr>(object.getTarget());
    out.push_back({target.getChip().str(), object.getObject().getValue().str()});
  }
  return out;
}

std::string findCudaToolkit(const TargetOptions &target) {
  std::vector<std::string> candidates;
  if (!target.cudaPath.empty()) candidates.push_back(target.cudaPath);
  if (const char *env = std::getenv("CUDA_PATH")) candidates.push_back(env);
  candidates.push_back("/usr/local/cuda");
  for (auto &c : candidates) {
    llvm::SmallString<256> ptxas(c), fatbinary(c);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    llvm::sys::path::append(fatbinary, "bin", "fatbinary");
    if (llvm::sys::fs::can_execute(ptxas) && llvm::sys::fs::can_execute(fatbinary)) return c;
    if (!target.cudaPath.empty() && c == target.cudaPath) return ""; // an explicit path that lacks them
  }
  return "";
}

/// A temporary file holding `bytes`, removed with this object.
struct TempFile {
  std::string path;
  TempFile(const std::string &suffix) {
    llvm::SmallString<128> p;
    llvm::sys::fs::createTemporaryFile("nxc-cuda", suffix, p);
    path = p.str().str();
  }
  ~TempFile() { llvm::sys::fs::remove(path); }
};

Status runTool(const std::string &tool, const std::vector<std::string> &args) {
  std::vector<llvm::StringRef> argv = {tool};
  for (auto &a : args) argv.push_back(a);
  TempFile log(".log");
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log.path), llvm::StringRef(log.path)};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(tool, argv, std::nullopt, redirects, 0, 0, &message);
  if (rc != 0) {
    auto text = llvm::MemoryBuffer::getFile(log.path);
    return error(Loc{}, fmt::format(FMT_STRING("{} failed{}{}:\n{}"), tool, message.empty() ? "" : ": ", message,
                                    text ? (*text)->getBuffer().str() : ""));
  }
  return okStatus();
}

/// Cubins for every architecture and the newest one's PTX, in one fatbin.
Result<std::string> buildFatbin(const std::string &toolkit, const std::vector<std::pair<std::string, std::string>> &ptx,
                                std::vector<std::string> &images) {
  std::string ptxas = toolkit + "/bin/ptxas", fatbinary = toolkit + "/bin/fatbinary";
  std::vector<std::unique_ptr<TempFile>> files;
  std::vector<std::string> fatArgs = {"-64", "--compress-all"};
  TempFile out(".fatbin");
  fatArgs.push_back("--create=" + out.path);
  for (auto &[arch, text] : ptx) {
    files.push_back(std::make_unique<TempFile>(".ptx"));
    std::string ptxPath = files.back()->path;
    NXC_CHECK(writeBytes(ptxPath, text));
    files.push_back(std::make_unique<TempFile>(".cubin"));
    std::string cubin = files.back()->path;
    NXC_CHECK(runTool(ptxas, {"-arch=" + arch, "-O3", ptxPath, "-o", cubin}));
    fatArgs.push_back(fmt::format(FMT_STRING("--image3=kind=elf,sm={},file={}"), smNumber(arch), cubin));
    images.push_back("cubin " + arch);
  }
  auto &[newest, newestPtx] = ptx.back();
  fatArgs.push_back(fmt::format(FMT_STRING("--image3=kind=ptx,sm={},file={}"), smNumber(newest),
                                files[files.size() - 2]->path));
  images.push_back("ptx " + newest);
  NXC_CHECK(runTool(fatbinary, fatArgs));
  auto bytes = llvm::MemoryBuffer::getFile(out.path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!bytes) return error(Loc{}, fmt::format(FMT_STRING("cannot read {}"), out.path));
  return (*bytes)->getBuffer().str();
}

/// Moves `f`'s body into a new function with one more parameter, the stream,
/// that every launch uses; the per-launch stream create/synchronize/destroy
/// of MLIR's lowering disappear (the entries synchronize once).
llvm::Function *launchOnGivenStream(llvm::Module &m, llvm::Function *f) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  std::vector<llvm::Type *> params(f->getFunctionType()->param_begin(), f->getFunctionType()->param_end());
  params.push_back(ptr);
  auto *g = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false),
                                   llvm::GlobalValue::InternalLinkage, "__nxc_launch_" + f->getName(), m);
  g->splice(g->end(), f);
  for (unsigned i = 0; i < f->arg_size(); ++i) f->getArg(i)->replaceAllUsesWith(g->getArg(i));
  llvm::Value *stream = g->getArg(params.size() - 1);
  std::vector<llvm::CallInst *> dead;
  for (auto &bb : *g)
    for (auto &inst : bb)
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst))
        if (llvm::Function *callee = call->getCalledFunction()) {
          llvm::StringRef name = callee->getName();
          if (name == "mgpuStreamCreate") {
            call->replaceAllUsesWith(stream);
            dead.push_back(call);
          } else if (name == "mgpuStreamSynchronize" || name == "mgpuStreamDestroy") {
            dead.push_back(call);
          }
        }
  for (auto *c : dead) c->eraseFromParent();
  f->eraseFromParent();
  return g;
}

/// The exported C entries of one function (see the header's CUDA section):
///   int32_t S(tensors...)                       device pointers, module's stream, synchronized
///   int32_t S_on_stream(tensors..., ws, stream) device pointers, caller's stream and workspace, asynchronous
///   int32_t S_host(tensors...)                  host pointers, copied in and out
///   size_t  S_workspace_size(void)
void addCudaEntries(llvm::Module &m, const EntryInfo &e, llvm::Function *launch, const std::vector<uint64_t> &bytes,
                    unsigned inputs) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx), *i64 = llvm::Type::getInt64Ty(ctx);
  unsigned tensors = launch->arg_size() - 2;
  // __nxc_run_S(void **argv, void *stream): argv = tensors..., workspace.
  auto *run = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr}, false),
                                     llvm::GlobalValue::InternalLinkage, "__nxc_run_" + e.symbol, m);
  {
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", run));
    std::vector<llvm::Value *> args;
    for (unsigned i = 0; i <= tensors; ++i)
      args.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, run->getArg(0), i)));
    args.push_back(run->getArg(1));
    b.CreateCall(launch, args);
    b.CreateRetVoid();
  }
  // The tensors' byte sizes, inputs first.
  std::vector<llvm::Constant *> sizes;
  for (uint64_t n : bytes) sizes.push_back(llvm::ConstantInt::get(i64, n));
  auto *sizeTable = new llvm::GlobalVariable(m, llvm::ArrayType::get(i64, sizes.size()), true,
                                             llvm::GlobalValue::InternalLinkage,
                                             llvm::ConstantArray::get(llvm::ArrayType::get(i64, sizes.size()), sizes),
                                             "__nxc_sizes_" + e.symbol);
  auto declare = [&](const char *name, llvm::Type *ret, std::vector<llvm::Type *> ps) {
    return m.getOrInsertFunction(name, llvm::FunctionType::get(ret, ps, false));
  };
  // int nxrt_cuda_run(void (*)(void**, void*), void **argv, uint32 ntensors, uint64 ws, void *stream, void *ws_ptr, int
  // mode)
  auto runtimeRun = declare("nxrt_cuda_run", i32, {ptr, ptr, i32, i32, ptr, i64, ptr, ptr, i32});
  auto define = [&](const std::string &name, llvm::Type *ret, std::vector<llvm::Type *> ps) {
    auto *f = llvm::Function::Create(llvm::FunctionType::get(ret, ps, false), llvm::GlobalValue::ExternalLinkage,
                                     name, m);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    return f;
  };
  // mode: 0 = device pointers on the module's stream; 1 = caller's stream and
  // workspace; 2 = host pointers.
  auto wrapper = [&](const std::string &name, bool withStream, int mode) {
    std::vector<llvm::Type *> ps(tensors, ptr);
    if (withStream) { ps.push_back(ptr); ps.push_back(ptr); }
    llvm::Function *f = define(name, i32, ps);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
    llvm::Value *argv = b.CreateAlloca(ptr, b.getInt32(tensors + 1));
    for (unsigned i = 0; i < tensors; ++i) b.CreateStore(f->getArg(i), b.CreateConstGEP1_64(ptr, argv, i));
    llvm::Value *null = llvm::ConstantPointerNull::get(llvm::PointerType::get(ctx, 0));
    llvm::Value *ws = withStream ? f->getArg(tensors) : null;
    llvm::Value *stream = withStream ? f->getArg(tensors + 1) : null;
    b.CreateRet(b.CreateCall(runtimeRun, {run, argv, b.getInt32(tensors), b.getInt32(inputs), sizeTable,
                                          llvm::ConstantInt::get(i64, e.workspaceSize), ws, stream,
                                          b.getInt32(mode)}));
  };
  wrapper(e.symbol, false, 0);
  wrapper(abi::onStreamSymbol(e.symbol), true, 1);
  wrapper(e.symbol + "_host", false, 2);
  llvm::Function *size = define(abi::workspaceSizeSymbol(e.symbol), i64, {});
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", size));
  b.CreateRet(llvm::ConstantInt::get(i64, e.workspaceSize));
}

/// Byte sizes of a function's tensors (inputs, then outputs) from its
/// memref signature, before lowering.
std::vector<uint64_t> tensorBytes(mlir::func::FuncOp fn) {
  std::vector<uint64_t> out;
  auto types = fn.getArgumentTypes();
  for (size_t i = 0; i + 1 < types.size(); ++i) {
    auto t = llvm::cast<mlir::MemRefType>(types[i]);
    uint64_t bits = t.getElementType().getIntOrFloatBitWidth();
    out.push_back((uint64_t)t.getNumElements() * ((bits + 7) / 8));
  }
  return out;
}

} // namespace

Status compileCuda(mlir::ModuleOp module, const TargetOptions &target, Stage stage, llvm::TargetMachine &tm,
                   DiagnosticCollector &diags, CompileOutput &out) {
  const llvm::Triple &triple = tm.getTargetTriple();
  if (!triple.isArch64Bit() || !triple.isOSLinux())
    return error(Loc{}, fmt::format(FMT_STRING("--device cuda needs a 64-bit Linux host target, not '{}'"),
                                    triple.str()));
  NXC_TRY(archs, gpuArchitectures(target));

  for (auto &e : out.entries)
    if (auto fn = module.lookupSymbol<mlir::func::FuncOp>(e.symbol)) e.inputs = fn.getNumArguments();
  NXC_CHECK(runPipeline(module, kBufferizeForGpu, diags, "bufferizing"));
  if (stage == Stage::Bufferized) {
    readWorkspaceSizes(module, out.entries);
    out.text = print(module);
    return okStatus();
  }
  NXC_CHECK(runPipeline(module, kToGpu, diags, "mapping to the GPU"));
  gatherKernels(module);
  readWorkspaceSizes(module, out.entries);
  if (stage == Stage::Gpu) {
    out.text = print(module);
    return okStatus();
  }
  // No device malloc, ever: a kernel that allocates leaks and fails at its second call.
  std::string malloced;
  module.walk([&](mlir::gpu::GPUModuleOp gm) {
    gm.walk([&](mlir::Operation *op) {
      llvm::StringRef name = op->getName().getStringRef();
      if (name == "memref.alloc" || name == "memref.realloc") malloced = name.str();
    });
  });
  if (!malloced.empty()) return internalError("mapping to the GPU", "a kernel allocates memory (" + malloced + ")");

  std::map<std::string, std::vector<uint64_t>> bytes;
  for (auto &e : out.entries)
    if (auto fn = module.lookupSymbol<mlir::func::FuncOp>(e.symbol)) bytes[e.symbol] = tensorBytes(fn);

  // Math first, so that only what the GPU lacks is left to libdevice.
  NXC_CHECK(runPipeline(module, "gpu.module(convert-linalg-to-loops),nxc-expand-math", diags, "lowering for CUDA"));
  nativeMath(module);
  std::string toolkit = findCudaToolkit(target);
  NXC_CHECK(runPipeline(module, lowerPipeline(archs, toolkit), diags, "lowering for CUDA"));
  auto binaries = llvm::to_vector(module.getOps<mlir::gpu::BinaryOp>());
  for (auto binary : binaries)
    for (auto &[arch, text] : ptxByArch(binary))
      if (auto missing = missingFunctions(text); !missing.empty())
        return error(Loc{}, fmt::format(FMT_STRING("the GPU code needs {} from libdevice (f64 math), which comes "
                                                   "with a CUDA toolkit: install one or give --cuda-path"),
                                        fmt::join(missing, ", ")));
  if (stage == Stage::Ptx) {
    for (auto binary : binaries)
      for (auto &[arch, text] : ptxByArch(binary)) out.text += fmt::format(FMT_STRING("// {}\n{}\n"), arch, text);
    return okStatus();
  }
  for (auto binary : binaries) {
    auto ptx = ptxByArch(binary);
    mlir::Attribute nvvmTarget = llvm::cast<mlir::gpu::ObjectAttr>(binary.getObjects()[0]).getTarget();
    mlir::gpu::ObjectAttr object;
    auto *ctx = module.getContext();
    if (!toolkit.empty()) {
      std::vector<std::string> images;
      NXC_TRY(fatbin, buildFatbin(toolkit, ptx, images));
      object = mlir::gpu::ObjectAttr::get(ctx, nvvmTarget, mlir::gpu::CompilationTarget::Fatbin,
                                          mlir::StringAttr::get(ctx, fatbin), nullptr, nullptr);
      out.gpuImages = images;
    } else {
      object = mlir::gpu::ObjectAttr::get(ctx, nvvmTarget, mlir::gpu::CompilationTarget::Assembly,
                                          mlir::StringAttr::get(ctx, ptx.front().second + std::string(1, '\0')),
                                          nullptr, nullptr);
      out.gpuImages = {"ptx " + ptx.front().first};
      out.warnings.push_back(fmt::format(
          FMT_STRING("no CUDA toolkit found ({}$CUDA_PATH, /usr/local/cuda): the library holds PTX for {} only, "
                     "which the driver compiles when the library is first used (tens of milliseconds); give "
                     "--cuda-path to embed cubins"),
          target.cudaPath.empty() ? "" : "--cuda-path " + target.cudaPath + ", ", ptx.front().first));
    }
    binary.setObjectsAttr(mlir::ArrayAttr::get(ctx, {object}));
  }
  if (stage == Stage::LLVMDialect) {
    out.text = print(module);
    return okStatus();
  }

  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> m = mlir::translateModuleToLLVMIR(module, llvmCtx, "nxc");
  if (!m) return internalError("translating to LLVM IR", diags.messages);
  prepareModuleForTarget(*m, tm);
  // A fatbin goes where CUDA's tools look for one (cuobjdump lists its cubins and PTX).
  if (!toolkit.empty())
    if (auto *binary = m->getNamedGlobal("nxc_kernels_binary")) {
      binary->setSection(".nv_fatbin");
      binary->setAlignment(llvm::Align(8));
    }
  for (auto &e : out.entries) {
    llvm::Function *f = m->getFunction(e.symbol);
    if (!f) continue;
    llvm::Function *launch = launchOnGivenStream(*m, f);
    addCudaEntries(*m, e, launch, bytes[e.symbol], e.inputs);
  }
  if (!target.deviceErrorQuery.empty()) {
    llvm::Type *ptr = llvm::PointerType::get(llvmCtx, 0);
    auto *f = llvm::Function::Create(llvm::FunctionType::get(ptr, false), llvm::GlobalValue::ExternalLinkage,
                                     target.deviceErrorQuery, *m);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(llvmCtx, "entry", f));
    b.CreateRet(b.CreateCall(m->getOrInsertFunction("nxrt_cuda_error", llvm::FunctionType::get(ptr, false))));
  }
  NXC_CHECK(linkInternalBitcode(*m, NXC_EMBEDDED(cuda_loader_bc), "cuda_loader.bc"));
  std::string verifyErrors;
  llvm::raw_string_ostream ves(verifyErrors);
  if (llvm::verifyModule(*m, &ves)) return internalError("verifying LLVM IR", verifyErrors);
  optimizeModule(*m, tm, target.optLevel);
  if (stage == Stage::LLVMIR) {
    llvm::raw_string_ostream os(out.text);
    m->print(os, nullptr);
    return okStatus();
  }
  NXC_TRY(code, emitMachineCode(*m, tm, stage == Stage::Asm));
  if (stage == Stage::Asm) out.text = std::move(code);
  else out.object = std::move(code);
  return okStatus();
}

} // namespace detail
} // namespace nxc
