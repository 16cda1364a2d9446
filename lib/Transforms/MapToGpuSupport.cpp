//===- MapToGpuSupport.cpp - the pieces nxc-map-to-gpu builds launches from -===//
//
// See MapToGpuSupport.h.
//
//===----------------------------------------------------------------------===//
#include "MapToGpuSupport.h"

namespace nxc::gpumap {

int64_t product(ArrayRef<int64_t> xs) {
  int64_t p = 1;
  for (int64_t x : xs) p *= x;
  return p;
}

SmallVector<Value> delinearize(OpBuilder &b, Location l, Value linear, ArrayRef<int64_t> ranges) {
  SmallVector<Value> idx(ranges.size());
  for (int i = (int)ranges.size() - 1; i >= 0; --i) {
    if (i == 0) {
      idx[i] = linear;
      break;
    }
    Value r = cIndex(b, l, ranges[i]);
    idx[i] = arith::RemUIOp::create(b, l, linear, r);
    linear = arith::DivUIOp::create(b, l, linear, r);
  }
  return idx;
}

std::optional<Space> spaceOf(linalg::GenericOp g, bool fixRow) {
  Space s;
  s.ranges = g.getStaticLoopRanges();
  s.rowFixed = fixRow;
  for (auto [i, it] : llvm::enumerate(g.getIteratorTypesArray())) {
    if (ShapedType::isDynamic(s.ranges[i])) return std::nullopt;
    if (fixRow && i == 0) continue;
    if (it == utils::IteratorType::parallel) {
      s.par.push_back(i);
      s.parRanges.push_back(s.ranges[i]);
    } else {
      s.red.push_back(i);
      s.redRanges.push_back(s.ranges[i]);
    }
  }
  s.pn = product(s.parRanges);
  s.rn = product(s.redRanges);
  return s;
}

SmallVector<Value> loopIndices(OpBuilder &b, Location l, const Space &s, Value p, Value r) {
  SmallVector<Value> ivs(s.ranges.size());
  if (s.rowFixed) ivs[0] = s.row;
  if (!s.par.empty()) {
    SmallVector<Value> pi = delinearize(b, l, p, s.parRanges);
    for (auto [k, d] : llvm::enumerate(s.par)) ivs[d] = pi[k];
  }
  if (!s.red.empty()) {
    SmallVector<Value> ri = delinearize(b, l, r, s.redRanges);
    for (auto [k, d] : llvm::enumerate(s.red)) ivs[d] = ri[k];
  }
  return ivs;
}

SmallVector<Value> indicesOf(OpBuilder &b, Location l, AffineMap map, ArrayRef<Value> ivs) {
  if (map.getNumResults() == 0) return {};
  return *affine::expandAffineMap(b, l, map, ivs);
}

SmallVector<Value> emitPayload(OpBuilder &b, Location l, linalg::GenericOp g, ArrayRef<Value> ivs,
                               ArrayRef<Value> outs) {
  IRMapping map;
  Block &body = g.getRegion().front();
  for (OpOperand *in : g.getDpsInputOperands()) {
    BlockArgument arg = body.getArgument(in->getOperandNumber());
    if (arg.use_empty()) continue;
    if (!isa<MemRefType>(in->get().getType())) {
      map.map(arg, in->get());
      continue;
    }
    map.map(arg, memref::LoadOp::create(b, l, in->get(), indicesOf(b, l, g.getMatchingIndexingMap(in), ivs)));
  }
  for (auto [i, out] : llvm::enumerate(g.getDpsInitsMutable())) {
    BlockArgument arg = body.getArgument(out.getOperandNumber());
    if (arg.use_empty()) continue;
    if (i < outs.size() && outs[i]) {
      map.map(arg, outs[i]);
      continue;
    }
    map.map(arg, memref::LoadOp::create(b, l, out.get(), indicesOf(b, l, g.getMatchingIndexingMap(&out), ivs)));
  }
  for (Operation &op : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      map.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(op, map);
  }
  SmallVector<Value> results;
  for (Value v : body.getTerminator()->getOperands()) results.push_back(map.lookupOrDefault(v));
  return results;
}

void storeOutputs(OpBuilder &b, Location l, linalg::GenericOp g, ArrayRef<Value> ivs, ArrayRef<Value> values) {
  for (auto [i, out] : llvm::enumerate(g.getDpsInitsMutable()))
    memref::StoreOp::create(b, l, values[i], out.get(), indicesOf(b, l, g.getMatchingIndexingMap(&out), ivs));
}

std::optional<Combiner> combinerOf(linalg::GenericOp g) {
  if (g.getNumDpsInits() != 1 || g.getNumReductionLoops() == 0) return std::nullopt;
  Block &body = g.getRegion().front();
  BlockArgument out = body.getArgument(g.getDpsInitsMutable()[0].getOperandNumber());
  Value yielded = body.getTerminator()->getOperand(0);
  Operation *op = yielded.getDefiningOp();
  if (!op || op->getBlock() != &body || op->getNumOperands() != 2 || !out.hasOneUse() ||
      out.getUses().begin()->getOwner() != op)
    return std::nullopt;
  Type t = out.getType();
  Builder b(g.getContext());
  if (auto ft = dyn_cast<FloatType>(t)) {
    const llvm::fltSemantics &sem = ft.getFloatSemantics();
    auto f = [&](llvm::APFloat v) -> TypedAttr { return b.getFloatAttr(ft, v); };
    if (isa<arith::AddFOp>(op)) return Combiner{op, f(llvm::APFloat::getZero(sem, /*Negative=*/true))};
    if (isa<arith::MulFOp>(op)) return Combiner{op, f(llvm::APFloat::getOne(sem))};
    // A type without infinities (f8_e4m3fn) starts from its largest finite
    // value, Nx's infinity for it.
    auto extreme = [&](bool negative) {
      return llvm::APFloat::semanticsHasInf(sem) ? llvm::APFloat::getInf(sem, negative)
                                                 : llvm::APFloat::getLargest(sem, negative);
    };
    if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op)) return Combiner{op, f(extreme(true))};
    if (isa<arith::MinimumFOp, arith::MinNumFOp>(op)) return Combiner{op, f(extreme(false))};
    return std::nullopt;
  }
  auto it = dyn_cast<IntegerType>(t);
  if (!it) return std::nullopt;
  unsigned w = it.getWidth();
  auto i = [&](llvm::APInt v) -> TypedAttr { return b.getIntegerAttr(it, v); };
  if (isa<arith::AddIOp, arith::OrIOp, arith::XOrIOp, arith::MaxUIOp>(op)) return Combiner{op, i(llvm::APInt(w, 0))};
  if (isa<arith::MulIOp>(op)) return Combiner{op, i(llvm::APInt(w, 1))};
  if (isa<arith::AndIOp, arith::MinUIOp>(op)) return Combiner{op, i(llvm::APInt::getAllOnes(w))};
  if (isa<arith::MaxSIOp>(op)) return Combiner{op, i(llvm::APInt::getSignedMinValue(w))};
  if (isa<arith::MinSIOp>(op)) return Combiner{op, i(llvm::APInt::getSignedMaxValue(w))};
  return std::nullopt;
}

Value combine(OpBuilder &b, Location l, Operation *combiner, Value x, Value y) {
  OperationState st(l, combiner->getName(), ValueRange{x, y}, TypeRange{x.getType()}, combiner->getAttrs());
  return b.create(st)->getResult(0);
}

void combineIntoOutput(OpBuilder &b, Location l, linalg::GenericOp g, const Space &s, const Combiner &c, Value p,
                       Value init, Value total) {
  SmallVector<Value> ivs = loopIndices(b, l, s, p, arith::ConstantIndexOp::create(b, l, 0));
  OpOperand &out = g.getDpsInitsMutable()[0];
  SmallVector<Value> idx = indicesOf(b, l, g.getMatchingIndexingMap(&out), ivs);
  Value start = init ? init : memref::LoadOp::create(b, l, out.get(), idx).getResult();
  memref::StoreOp::create(b, l, combine(b, l, c.op, start, total), out.get(), idx);
}

Value fillValue(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 || g.getNumReductionLoops() != 0) return nullptr;
  Value in = g.getDpsInputOperand(0)->get();
  if (isa<ShapedType>(in.getType())) return nullptr;
  Block &body = g.getRegion().front();
  if (body.getTerminator()->getOperand(0) != body.getArgument(0)) return nullptr;
  return in;
}

OpOperand *largestInput(linalg::GenericOp g) {
  OpOperand *largest = nullptr;
  int64_t size = -1;
  for (OpOperand *in : g.getDpsInputOperands())
    if (auto t = dyn_cast<MemRefType>(in->get().getType()); t && t.hasStaticShape() && t.getNumElements() > size) {
      size = t.getNumElements();
      largest = in;
    }
  return largest;
}

bool lanesOverReduction(linalg::GenericOp g, const Space &s) {
  OpOperand *largest = largestInput(g);
  if (!largest) return true;
  AffineMap map = g.getMatchingIndexingMap(largest);
  if (map.getNumResults() == 0) return true;
  auto d = dyn_cast<AffineDimExpr>(map.getResults().back());
  if (!d) return true;
  return llvm::is_contained(s.red, d.getPosition()) || !llvm::is_contained(s.par, d.getPosition());
}

Value warpReduce(OpBuilder &b, Location l, Operation *combiner, Value value) {
  for (int32_t offset = 16; offset >= 1; offset /= 2) {
    Value other = gpu::ShuffleOp::create(b, l, value, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
    value = combine(b, l, combiner, value, other);
  }
  return value;
}

Value teamReduce(OpBuilder &b, Location l, const Threads &t, Operation *combiner, Value value, bool alongLanes) {
  if (alongLanes && t.lanes % 32 == 0 && shuffles(value.getType())) {
    // Each warp combines its lanes with shuffles, then every thread combines
    // the team's warp totals from shared memory: two barriers in all.
    value = warpReduce(b, l, combiner, value);
    if (t.lanes == 32) return value;
    Value c32 = cIndex(b, l, 32);
    Value first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, arith::RemUIOp::create(b, l, t.lane, c32),
                                        cIndex(b, l, 0));
    auto ifOp = scf::IfOp::create(b, l, first, false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      memref::StoreOp::create(b, l, value, t.tree, ValueRange{t.slice, arith::DivUIOp::create(b, l, t.lane, c32)});
    }
    gpu::BarrierOp::create(b, l);
    Value total = memref::LoadOp::create(b, l, t.tree, ValueRange{t.slice, cIndex(b, l, 0)});
    for (int64_t w = 1; w < t.lanes / 32; ++w)
      total =
          combine(b, l, combiner, total, memref::LoadOp::create(b, l, t.tree, ValueRange{t.slice, cIndex(b, l, w)}));
    gpu::BarrierOp::create(b, l); // the tree is reused next
    return total;
  }
  memref::StoreOp::create(b, l, value, t.tree, ValueRange{t.slice, t.lane});
  gpu::BarrierOp::create(b, l);
  Value idx = alongLanes ? t.lane : t.slice;
  int64_t n = alongLanes ? t.lanes : t.slices;
  auto at = [&](Value i) { return alongLanes ? SmallVector<Value>{t.slice, i} : SmallVector<Value>{i, t.lane}; };
  for (int64_t s = n / 2; s >= 1; s /= 2) {
    Value active = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, idx, cIndex(b, l, s));
    auto ifOp = scf::IfOp::create(b, l, active, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value other = arith::AddIOp::create(b, l, idx, cIndex(b, l, s));
      Value x = memref::LoadOp::create(b, l, t.tree, at(idx));
      Value y = memref::LoadOp::create(b, l, t.tree, at(other));
      memref::StoreOp::create(b, l, combine(b, l, combiner, x, y), t.tree, at(idx));
    }
    gpu::BarrierOp::create(b, l);
  }
  Value result = memref::LoadOp::create(b, l, t.tree, at(cIndex(b, l, 0)));
  gpu::BarrierOp::create(b, l); // the tree is reused next
  return result;
}

void forLoop(OpBuilder &b, Location l, Value start, Value end, Value step,
             function_ref<void(OpBuilder &, Value)> body) {
  auto loop = scf::ForOp::create(b, l, start, end, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(b, loop.getInductionVar());
}

void emitTeamReduction(OpBuilder &b, Location l, linalg::GenericOp g, const Space &s, const Combiner &c,
                       const Threads &t, bool alongLanes, Value pFirst, Value pStride, Value rBegin, Value rEnd,
                       Value init, Value partials, Value chunk, int64_t tile) {
  Value identity = arith::ConstantOp::create(b, l, c.identity);
  int64_t tiles = s.pn / tile;
  Value tn = cIndex(b, l, tiles);
  // Every thread of a block runs the same rounds (the tree has barriers);
  // threads past the last point fold point 0 and write nothing.
  forLoop(b, l, pFirst, tn, pStride, [&](OpBuilder &b, Value round) {
    Value q = arith::AddIOp::create(b, l, round, alongLanes ? t.slice : t.lane);
    Value valid = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, q, tn);
    Value qSafe = arith::SelectOp::create(b, l, valid, q, cIndex(b, l, 0));
    SmallVector<Value> points, safePoints;
    for (int64_t j = 0; j < tile; ++j) {
      auto at = [&](Value v) {
        return tile == 1 ? v
                         : arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, v, cIndex(b, l, tile)),
                                                 cIndex(b, l, j))
                               .getResult();
      };
      points.push_back(at(q));
      safePoints.push_back(at(qSafe));
    }
    Value rStart = arith::AddIOp::create(b, l, rBegin, alongLanes ? t.lane : t.slice);
    Value rStep = cIndex(b, l, alongLanes ? t.lanes : t.slices);
    auto loop = scf::ForOp::create(b, l, rStart, rEnd, rStep, SmallVector<Value>(tile, identity));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> next;
      for (int64_t j = 0; j < tile; ++j) {
        SmallVector<Value> ivs = loopIndices(b, l, s, safePoints[j], loop.getInductionVar());
        next.push_back(emitPayload(b, l, g, ivs, {loop.getRegionIterArgs()[j]})[0]);
      }
      scf::YieldOp::create(b, l, next);
    }
    SmallVector<Value> totals;
    for (int64_t j = 0; j < tile; ++j)
      totals.push_back(teamReduce(b, l, t, c.op, loop.getResult(j), alongLanes));
    Value leader = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, alongLanes ? t.lane : t.slice,
                                         cIndex(b, l, 0));
    auto ifOp = scf::IfOp::create(b, l, arith::AndIOp::create(b, l, leader, valid), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    for (int64_t j = 0; j < tile; ++j) {
      if (partials) {
        memref::StoreOp::create(b, l, totals[j], partials, ValueRange{points[j], chunk});
        continue;
      }
      combineIntoOutput(b, l, g, s, c, points[j], init, totals[j]);
    }
  });
}

int64_t outputTile(linalg::GenericOp g, const Space &s) {
  if (s.par.empty()) return 1;
  unsigned inner = s.par.back();
  int64_t extent = s.parRanges.back();
  if (extent < 2 || extent > 16) return 1;
  OpOperand *largest = largestInput(g);
  if (!largest || g.getMatchingIndexingMap(largest).isFunctionOfDim(inner)) return 1;
  return extent;
}

void emitSerialReduction(OpBuilder &b, Location l, linalg::GenericOp g, const Space &s, Value first, Value stride) {
  forLoop(b, l, first, cIndex(b, l, s.pn), stride, [&](OpBuilder &b, Value p) {
    SmallVector<Value> ivs0 = loopIndices(b, l, s, p, cIndex(b, l, 0));
    SmallVector<Value> init;
    for (OpOperand &out : g.getDpsInitsMutable())
      init.push_back(memref::LoadOp::create(b, l, out.get(), indicesOf(b, l, g.getMatchingIndexingMap(&out), ivs0)));
    auto loop = scf::ForOp::create(b, l, cIndex(b, l, 0), cIndex(b, l, s.rn), cIndex(b, l, 1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> ivs = loopIndices(b, l, s, p, loop.getInductionVar());
      SmallVector<Value> accs(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
      scf::YieldOp::create(b, l, emitPayload(b, l, g, ivs, accs));
    }
    storeOutputs(b, l, g, ivs0, SmallVector<Value>(loop.getResults().begin(), loop.getResults().end()));
  });
}

void emitElementwise(OpBuilder &b, Location l, linalg::GenericOp g, const Space &s, Value first, Value stride) {
  forLoop(b, l, first, cIndex(b, l, s.pn), stride, [&](OpBuilder &b, Value i) {
    SmallVector<Value> ivs = loopIndices(b, l, s, i, nullptr);
    storeOutputs(b, l, g, ivs, emitPayload(b, l, g, ivs));
  });
}

gpu::LaunchOp makeLaunch(OpBuilder &b, Location l, int64_t blocks, int64_t bx, int64_t by, ArrayRef<Type> trees) {
  Attribute workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  SmallVector<Type> attributions;
  for (Type t : trees) attributions.push_back(MemRefType::get({by, bx}, t, MemRefLayoutAttrInterface{}, workgroup));
  Value one = cIndex(b, l, 1);
  auto launch = gpu::LaunchOp::create(b, l, cIndex(b, l, blocks), one, one, cIndex(b, l, bx), cIndex(b, l, by), one,
                                      nullptr, nullptr, {}, attributions);
  OpBuilder ib = OpBuilder::atBlockEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(ib, l);
  return launch;
}

Value treeFor(OpBuilder &b, Location l, gpu::LaunchOp launch, ArrayRef<Type> trees, Type type, int64_t lanes,
              int64_t slices) {
  auto it = llvm::find(trees, type);
  Value flat = launch.getWorkgroupAttributions()[it - trees.begin()];
  auto flatType = cast<MemRefType>(flat.getType());
  if (flatType.getShape() == ArrayRef<int64_t>{slices, lanes}) return flat;
  Attribute space = flatType.getMemorySpace();
  Value linear = memref::CollapseShapeOp::create(b, l, flat, ArrayRef<ReassociationIndices>{{0, 1}});
  return memref::ExpandShapeOp::create(b, l, MemRefType::get({slices, lanes}, type, MemRefLayoutAttrInterface{}, space),
                                       linear, ArrayRef<ReassociationIndices>{{0, 1}});
}

bool staysOnHost(Operation *op) {
  return isa<arith::ConstantOp, memref::GetGlobalOp, func::ReturnOp>(op) ||
         (isa<ViewLikeOpInterface>(op) && op->getNumRegions() == 0 && isMemoryEffectFree(op));
}

bool sinkable(Operation *op) {
  return isa<arith::ConstantOp, memref::GetGlobalOp>(op) || isa<ViewLikeOpInterface>(op) ||
         isa<memref::ExtractStridedMetadataOp>(op);
}

bool isMappable(Operation *op) {
  auto g = dyn_cast<linalg::GenericOp>(op);
  return g && g.hasPureBufferSemantics() && spaceOf(g).has_value();
}

Value rowRoot(Value v) {
  while (true) {
    if (isa<BlockArgument>(v)) return v;
    Operation *def = v.getDefiningOp();
    if (!def) return nullptr;
    if (isa<memref::ViewOp>(def)) return v;
    auto src = [&](Value s) -> Value {
      auto from = cast<MemRefType>(s.getType()), to = cast<MemRefType>(v.getType());
      if (from.getRank() == 0 || to.getRank() == 0 || from.getDimSize(0) != to.getDimSize(0)) return nullptr;
      return s;
    };
    if (auto e = dyn_cast<memref::ExpandShapeOp>(def)) {
      SmallVector<ReassociationIndices> groups = e.getReassociationIndices();
      if (groups.empty()) return nullptr;
      // [[0, 1], ...] with the extra dimensions of size 1 keeps rows too.
      for (int64_t d : llvm::drop_begin(groups[0]))
        if (e.getResultType().getDimSize(d) != 1) return nullptr;
      v = src(e.getSrc());
    } else if (auto c = dyn_cast<memref::CollapseShapeOp>(def)) {
      SmallVector<ReassociationIndices> groups = c.getReassociationIndices();
      if (groups.empty() || groups[0].size() != 1) return nullptr;
      v = src(c.getSrc());
    } else {
      return nullptr;
    }
    if (!v) return nullptr;
  }
}

bool rowIndexed(linalg::GenericOp g, OpOperand &o) {
  AffineMap map = g.getMatchingIndexingMap(&o);
  if (map.getNumResults() == 0) return false;
  auto d = dyn_cast<AffineDimExpr>(map.getResult(0));
  return d && d.getPosition() == 0;
}

int64_t rowsOf(linalg::GenericOp g) {
  if (g.getNumLoops() == 0 || g.getIteratorTypesArray()[0] != utils::IteratorType::parallel) return 0;
  int64_t rows = g.getStaticLoopRanges()[0];
  for (OpOperand &out : g.getDpsInitsMutable())
    if (!rowIndexed(g, out) || !rowRoot(out.get())) return 0;
  return rows;
}

int64_t workOf(linalg::GenericOp g) {
  Space s = *spaceOf(g);
  return s.pn * std::max<int64_t>(s.rn, 1);
}

} // namespace nxc::gpumap
