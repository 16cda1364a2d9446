//===- ControlFlow.cpp - cond, while and print_value ------------------------===//
//
// cond becomes scf.if, while scf.while over the flattened state (loop-carried
// values copied into fresh tensors, so that reused buffers never alias), and
// print_value (JIT only) calls into the host's printer.
//
//===----------------------------------------------------------------------===//
#include "Helpers.h"
#include "../ScalarMath.h"
#include "nxc/Dialect/Nx/NxDialect.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;

namespace nxc::lowering {
namespace {

struct CondLowering : public OpConversionPattern<nx::CondOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::CondOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    SmallVector<Type> types;
    if (failed(getTypeConverter()->convertTypes(op.getResultTypes(), types))) return failure();
    Location l = op.getLoc();
    auto ifOp = scf::IfOp::create(rw, l, types, truthOf(rw, l, adaptor.getPred()), /*addThenBlock=*/false,
                                  /*addElseBlock=*/false);
    rw.inlineRegionBefore(op.getThenRegion(), ifOp.getThenRegion(), ifOp.getThenRegion().end());
    rw.inlineRegionBefore(op.getElseRegion(), ifOp.getElseRegion(), ifOp.getElseRegion().end());
    rw.replaceOp(op, ifOp.getResults());
    return success();
  }
};

struct WhileLowering : public OpConversionPattern<nx::WhileOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::WhileOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    SmallVector<Type> types;
    if (failed(getTypeConverter()->convertTypes(op.getResultTypes(), types))) return failure();
    Location l = op.getLoc();
    auto w = scf::WhileOp::create(rw, l, types, adaptor.getInits());
    rw.inlineRegionBefore(op.getCondition(), w.getBefore(), w.getBefore().end());
    rw.inlineRegionBefore(op.getBody(), w.getAfter(), w.getAfter().end());
    if (failed(rw.convertRegionTypes(&w.getBefore(), *getTypeConverter())) ||
        failed(rw.convertRegionTypes(&w.getAfter(), *getTypeConverter())))
      return failure();
    rw.replaceOp(op, w.getResults());
    return success();
  }
};

struct YieldLowering : public OpConversionPattern<nx::YieldOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::YieldOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Operation *parent = op->getParentOp();
    Location l = op.getLoc();
    if (auto w = llvm::dyn_cast<scf::WhileOp>(parent)) {
      if (op->getParentRegion() == &w.getBefore()) {
        Value c = truthOf(rw, l, adaptor.getValues()[0]);
        rw.replaceOpWithNewOp<scf::ConditionOp>(op, c, op->getBlock()->getArguments());
        return success();
      }
      // The next state: fresh tensors, so that no iteration's buffer is read
      // after the next one starts writing (loop buffers are reused).
      SmallVector<Value> next;
      for (Value v : adaptor.getValues()) next.push_back(freshCopy(rw, l, v));
      rw.replaceOpWithNewOp<scf::YieldOp>(op, next);
      return success();
    }
    if (llvm::isa<scf::IfOp>(parent)) {
      rw.replaceOpWithNewOp<scf::YieldOp>(op, adaptor.getValues());
      return success();
    }
    return failure();
  }
};

/// print_value (JIT only): calls into the host's printer, nxc_print_begin
/// with the header (a constant global's address), nxc_print_bits with every
/// element's bits zero-extended to 64 (row-major loops), nxc_print_end.
struct PrintValueLowering : public OpConversionPattern<nx::PrintValueOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::PrintValueOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    Type i64 = rw.getI64Type();
    auto declare = [&](StringRef name, TypeRange args) {
      if (module.lookupSymbol(name)) return;
      OpBuilder::InsertionGuard guard(rw);
      rw.setInsertionPointToStart(module.getBody());
      func::FuncOp::create(rw, l, name, rw.getFunctionType(args, {})).setPrivate();
    };
    declare("nxc_print_begin", {i64});
    declare("nxc_print_bits", {i64});
    declare("nxc_print_end", {});
    // The header, NUL-terminated, as a private constant.
    std::string text = op.getHeader().str();
    SmallVector<int8_t> bytes(text.begin(), text.end());
    bytes.push_back(0);
    auto bytesType = MemRefType::get({(int64_t)bytes.size()}, rw.getI8Type());
    std::string name;
    for (int k = 0; name.empty() || module.lookupSymbol(name); ++k) name = "nxc_print_header_" + std::to_string(k);
    {
      OpBuilder::InsertionGuard guard(rw);
      rw.setInsertionPointToStart(module.getBody());
      auto data = DenseElementsAttr::get(RankedTensorType::get({(int64_t)bytes.size()}, rw.getI8Type()),
                                         ArrayRef<int8_t>(bytes));
      memref::GlobalOp::create(rw, l, name, rw.getStringAttr("private"), bytesType, data, /*constant=*/true,
                               /*alignment=*/IntegerAttr());
    }
    Value header = memref::GetGlobalOp::create(rw, l, bytesType, name);
    Value address =
        arith::IndexCastOp::create(rw, l, i64, memref::ExtractAlignedPointerAsIndexOp::create(rw, l, header));
    func::CallOp::create(rw, l, "nxc_print_begin", TypeRange{}, ValueRange{address});
    for (Value t : adaptor.getInputs()) {
      auto type = llvm::cast<RankedTensorType>(t.getType());
      std::function<void(OpBuilder &, Location, SmallVector<Value>)> loops = [&](OpBuilder &b, Location nl,
                                                                                 SmallVector<Value> ivs) {
        unsigned d = ivs.size();
        if (d == type.getRank()) {
          Value e = tensor::ExtractOp::create(b, nl, t, ivs);
          Type et = e.getType();
          unsigned width = et.getIntOrFloatBitWidth();
          if (llvm::isa<FloatType>(et)) e = arith::BitcastOp::create(b, nl, b.getIntegerType(width), e);
          if (width < 64) e = arith::ExtUIOp::create(b, nl, i64, e);
          func::CallOp::create(b, nl, "nxc_print_bits", TypeRange{}, ValueRange{e});
          return;
        }
        Value lo = arith::ConstantIndexOp::create(b, nl, 0), one = arith::ConstantIndexOp::create(b, nl, 1);
        Value hi = arith::ConstantIndexOp::create(b, nl, type.getDimSize(d));
        scf::ForOp::create(b, nl, lo, hi, one, ValueRange{}, [&](OpBuilder &ib, Location il, Value iv, ValueRange) {
          SmallVector<Value> next = ivs;
          next.push_back(iv);
          loops(ib, il, next);
          scf::YieldOp::create(ib, il);
        });
      };
      loops(rw, l, {});
    }
    func::CallOp::create(rw, l, "nxc_print_end", TypeRange{}, ValueRange{});
    rw.eraseOp(op);
    return success();
  }
};

/// CPU: a convolution over enough input channels runs as one matrix product
/// (im2col). The input's windows become a [N, C * taps, output points]
/// matrix (channel-major, as the kernel [O, C, taps...] already is), and a
/// dot of the kernel as [O, C * taps] with it does the rest: the
/// blocked products of dots (register blocks, the thread pool) then serve

} // namespace

void populateControlFlowPatterns(RewritePatternSet &patterns, const TypeConverter &tc) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<CondLowering, WhileLowering, YieldLowering, PrintValueLowering>(tc, ctx, /*benefit=*/2);
}

} // namespace nxc::lowering
