//===- CuIROps.cpp - CuIR operations: verifiers and custom syntax ---------===//

#include "cuir/Dialect/CuIR.h"
#include "cuir/Support/IntRanges.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::cuir;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static StringRef spaceName(std::optional<MemorySpace> space) {
  return space ? stringifyMemorySpace(*space) : StringRef("no cuir");
}

/// Checks that `value` is a memref in one of `allowed` memory spaces.
static LogicalResult verifySpace(Operation *op, Value value, StringRef what,
                                 ArrayRef<MemorySpace> allowed) {
  std::optional<MemorySpace> space = getMemorySpace(value.getType());
  if (space && llvm::is_contained(allowed, *space))
    return success();
  auto diag = op->emitOpError() << what << " must be in ";
  llvm::interleave(
      allowed, diag,
      [&](MemorySpace s) { diag << stringifyMemorySpace(s); }, " or ");
  return diag << " memory, but is in " << spaceName(space) << " memory";
}

/// Checks that `type` is a register tile with a fragment layout of `kind`
/// and returns the layout.
static FailureOr<FragmentLayoutAttr>
verifyFragment(Operation *op, Type type, StringRef what,
               std::optional<FragmentKind> kind = std::nullopt) {
  FragmentLayoutAttr layout = getFragmentLayout(type);
  if (!layout)
    return op->emitOpError() << what
                             << " must be a register tile with a "
                                "#cuir.frag layout, but has type "
                             << type;
  if (kind && layout.getKind() != *kind)
    return op->emitOpError()
           << what << " must be a '" << stringifyFragmentKind(*kind)
           << "' fragment, but is a '" << stringifyFragmentKind(layout.getKind())
           << "' fragment";
  auto tensor = cast<RankedTensorType>(type);
  if (failed(layout.verifyShape(tensor.getShape(),
                                [&] { return op->emitOpError() << what << ": "; })))
    return failure();
  return layout;
}

static bool isGemmElementType(Type t) { return t.isBF16() || t.isF16(); }

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

void KernelOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                     FunctionType type, AffineMap grid, int64_t threads,
                     StringRef arch) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  state.addAttribute(getGridAttrName(state.name), AffineMapAttr::get(grid));
  state.addAttribute(getThreadsAttrName(state.name),
                     builder.getI64IntegerAttr(threads));
  state.addAttribute(getArchAttrName(state.name), builder.getStringAttr(arch));
  Region *body = state.addRegion();
  Block *entry = new Block();
  for (Type t : type.getInputs())
    entry->addArgument(t, state.location);
  body->push_back(entry);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(entry);
  ReturnOp::create(builder, state.location);
}

SmallVector<BlockArgument> KernelOp::getIndexParams() {
  SmallVector<BlockArgument> params;
  for (BlockArgument arg : getBody().getArguments())
    if (arg.getType().isIndex())
      params.push_back(arg);
  return params;
}

int64_t KernelOp::getNumWorkers(WorkerKind kind) {
  switch (kind) {
  case WorkerKind::Block:
    return 1;
  case WorkerKind::Warpgroup:
    return getThreads() / 128;
  case WorkerKind::Warp:
    return getThreads() / 32;
  }
  llvm_unreachable("unknown worker kind");
}

/// `@name(%arg: type {attrs}, ...) [-> results]`, as func.func writes it:
/// the symbol, the function type and the argument (and result) attributes
/// go to `result`; the arguments, named, to `args` for the body.
static ParseResult
parseSymbolAndSignature(OpAsmParser &parser, OperationState &result,
                        SmallVectorImpl<OpAsmParser::Argument> &args,
                        StringAttr typeAttrName, StringAttr argAttrsName,
                        StringAttr resAttrsName) {
  StringAttr name;
  if (parser.parseSymbolName(name, SymbolTable::getSymbolAttrName(),
                             result.attributes))
    return failure();
  SmallVector<Type> resultTypes;
  SmallVector<DictionaryAttr> resultAttrs;
  bool isVariadic = false;
  if (function_interface_impl::parseFunctionSignatureWithArguments(
          parser, /*allowVariadic=*/false, args, isVariadic, resultTypes,
          resultAttrs))
    return failure();
  SmallVector<Type> argTypes;
  for (auto &arg : args)
    argTypes.push_back(arg.type);
  Builder &b = parser.getBuilder();
  result.addAttribute(typeAttrName,
                      TypeAttr::get(b.getFunctionType(argTypes, resultTypes)));
  call_interface_impl::addArgAndResultAttrs(b, result, args, resultAttrs,
                                            argAttrsName, resAttrsName);
  return success();
}

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::Argument> args;
  if (parseSymbolAndSignature(
          parser, result, args, getFunctionTypeAttrName(result.name),
          getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name)))
    return failure();
  Builder &b = parser.getBuilder();

  AffineMap grid;
  int64_t threads;
  std::string arch;
  if (parser.parseKeyword("grid") || parser.parseAffineMap(grid) ||
      parser.parseKeyword("threads") || parser.parseInteger(threads) ||
      parser.parseKeyword("arch") || parser.parseString(&arch))
    return failure();
  result.addAttribute(getGridAttrName(result.name), AffineMapAttr::get(grid));
  result.addAttribute(getThreadsAttrName(result.name),
                      b.getI64IntegerAttr(threads));
  result.addAttribute(getArchAttrName(result.name), b.getStringAttr(arch));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  SMLoc bodyLoc = parser.getCurrentLocation();
  if (parser.parseRegion(*body, args))
    return failure();
  if (body->empty())
    return parser.emitError(bodyLoc, "a kernel needs a body");
  KernelOp::ensureTerminator(*body, b, result.location);
  return success();
}

void KernelOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  function_interface_impl::printFunctionSignature(
      p, *this, getArgumentTypes(), /*isVariadic=*/false, getResultTypes());
  p << " grid ";
  getGrid().print(p.getStream());
  p << " threads " << getThreads() << " arch ";
  p.printString(getArch());
  function_interface_impl::printFunctionAttributes(
      p, *this,
      {getGridAttrName(), getThreadsAttrName(), getArchAttrName(),
       getFunctionTypeAttrName(), getArgAttrsAttrName(),
       getResAttrsAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
}

/// A scratch buffer (`workspace:<name>`) is a memref whose shape the
/// `cuir.shape` map gives from the problem's sizes; no other argument has
/// one.
static LogicalResult verifyWorkspaceArgs(KernelOp kernel) {
  StringRef shapeName = CuIRDialect::ShapeAttrHelper::getNameStr();
  for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes())) {
    StringRef role = argRole(kernel, i);
    Attribute attr = kernel.getArgAttr(i, shapeName);
    if (!role.starts_with(kWorkspaceRolePrefix)) {
      if (attr)
        return kernel.emitOpError()
               << "parameter #" << i << " ('" << role << "') has a "
               << shapeName << ", which only workspace:<name> buffers have";
      continue;
    }
    auto emit = [&]() {
      return kernel.emitOpError() << "workspace '" << role << "' ";
    };
    if (role.size() == kWorkspaceRolePrefix.size())
      return emit() << "needs a name after 'workspace:'";
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref || !memref.getLayout().isIdentity())
      return emit() << "must be a row-major memref, not " << type;
    auto map = dyn_cast_or_null<AffineMapAttr>(attr);
    if (!map)
      return emit() << "needs its shape: " << shapeName
                    << " = affine_map<(B, Hq, Hkv, Nq, Nkv, d) -> (...)>";
    if (map.getValue().getNumDims() != std::size(kWorkspaceShapeDims) ||
        map.getValue().getNumSymbols() != 0)
      return emit() << "has a " << shapeName << " of "
                    << map.getValue().getNumDims() << " dimension(s) and "
                    << map.getValue().getNumSymbols()
                    << " symbol(s); it takes the 6 sizes (B, Hq, Hkv, Nq, "
                       "Nkv, d) and no symbols";
    if (map.getValue().getNumResults() != memref.getRank())
      return emit() << "has a " << shapeName << " of "
                    << map.getValue().getNumResults()
                    << " extent(s) for a rank-" << memref.getRank()
                    << " memref";
  }
  return success();
}

LogicalResult KernelOp::verify() {
  if (!getResultTypes().empty())
    return emitOpError() << "a kernel returns nothing; write its outputs to "
                            "global memory (got "
                         << getResultTypes().size() << " result(s))";
  for (auto [i, type] : llvm::enumerate(getArgumentTypes())) {
    if (!isa<BaseMemRefType>(type))
      continue;
    std::optional<MemorySpace> space = getMemorySpace(type);
    if (!space || *space != MemorySpace::Global)
      return emitOpError() << "parameter #" << i
                           << " is a memref in " << spaceName(space)
                           << " memory; kernel buffers must be in "
                              "#cuir.mem<global>";
  }
  if (failed(verifyWorkspaceArgs(*this)))
    return failure();
  AffineMap grid = getGrid();
  size_t numIndex = llvm::count_if(getArgumentTypes(),
                                   [](Type t) { return t.isIndex(); });
  if (grid.getNumSymbols() != 0)
    return emitOpError() << "grid map must have no symbols; its dimensions "
                            "are the kernel's index parameters";
  if (grid.getNumDims() != numIndex)
    return emitOpError() << "grid map has " << grid.getNumDims()
                         << " dimension(s) but the kernel has " << numIndex
                         << " index parameter(s)";
  if (grid.getNumResults() < 1 || grid.getNumResults() > 3)
    return emitOpError() << "grid must have 1 to 3 dimensions, got "
                         << grid.getNumResults();
  int64_t threads = getThreads();
  if (threads % 32 != 0 || threads > 1024)
    return emitOpError() << "threads must be a multiple of 32 and at most "
                            "1024, got "
                         << threads;
  StringRef arch = getArch();
  if (arch != "sm_80" && arch != "sm_86" && arch != "sm_89" &&
      arch != "sm_90" && arch != "sm_90a")
    return emitOpError() << "unsupported arch '" << arch
                         << "'; expected sm_80, sm_86, sm_89, sm_90 or sm_90a";
  return success();
}

//===----------------------------------------------------------------------===//
// BlockIdOp, BindOp, WorkerIdOp, YieldOp
//===----------------------------------------------------------------------===//

LogicalResult BlockIdOp::verify() {
  auto kernel = (*this)->getParentOfType<KernelOp>();
  if (!kernel)
    return emitOpError() << "must be inside a cuir.kernel";
  if (static_cast<unsigned>(getDim()) >= kernel.getGrid().getNumResults())
    return emitOpError() << "reads grid dimension "
                         << stringifyDimension(getDim())
                         << " but the kernel's grid has "
                         << kernel.getGrid().getNumResults()
                         << " dimension(s)";
  return success();
}

int64_t BindOp::getThreadsPerWorker() {
  switch (getKind()) {
  case WorkerKind::Block:
    if (auto kernel = (*this)->getParentOfType<KernelOp>())
      return kernel.getThreads();
    return 0;
  case WorkerKind::Warpgroup:
    return 128;
  case WorkerKind::Warp:
    return 32;
  }
  llvm_unreachable("unknown worker kind");
}

LogicalResult BindOp::verify() {
  auto kernel = (*this)->getParentOfType<KernelOp>();
  if (!kernel)
    return emitOpError() << "binds work to workers of a kernel and must be "
                            "inside a cuir.kernel";
  ArrayRef<int64_t> workers = getWorkers();
  StringRef kind = stringifyWorkerKind(getKind());
  if (workers.empty())
    return emitOpError() << "needs at least one " << kind;
  int64_t available = kernel.getNumWorkers(getKind());
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t w : workers) {
    if (w < 0 || w >= available)
      return emitOpError() << kind << " " << w << " does not exist: a block of "
                           << kernel.getThreads() << " threads has "
                           << available << " " << kind << "(s)";
    if (!seen.insert(w).second)
      return emitOpError() << kind << " " << w << " is listed twice";
  }
  if (auto parent = (*this)->getParentOfType<BindOp>()) {
    if (parent.getKind() >= getKind())
      return emitOpError() << "a " << kind << " bind cannot be nested in a "
                           << stringifyWorkerKind(parent.getKind())
                           << " bind; nested binds must be finer-grained";
  }
  if (std::optional<int64_t> regs = getRegs()) {
    if (getKind() != WorkerKind::Warpgroup)
      return emitOpError() << "setmaxnreg applies to warpgroups, not to a "
                           << kind;
    if (*regs < 24 || *regs > 256 || *regs % 8 != 0)
      return emitOpError() << "register budget " << *regs
                           << " must be a multiple of 8 in [24, 256]";
  }
  return success();
}

/// [0, hi] as an index range.
static ConstantIntRanges indexRange(int64_t hi) {
  unsigned w = IndexType::kInternalStorageBitWidth;
  return ConstantIntRanges::fromSigned(APInt(w, 0), APInt(w, hi));
}

/// The least and greatest values of grid expression `e` where its dimensions
/// (the kernel's sizes) are in [0, kIndexLimit); nullopt for a form it does
/// not bound.
static std::optional<std::pair<int64_t, int64_t>> gridExprRange(AffineExpr e) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return std::pair(c.getValue(), c.getValue());
  if (isa<AffineDimExpr>(e))
    return std::pair(int64_t(0), kIndexLimit - 1);
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return std::nullopt;
  auto l = gridExprRange(bin.getLHS()), r = gridExprRange(bin.getRHS());
  if (!l || !r)
    return std::nullopt;
  if (e.getKind() == AffineExprKind::Add) {
    auto lo = llvm::checkedAdd(l->first, r->first),
         hi = llvm::checkedAdd(l->second, r->second);
    return lo && hi ? std::optional(std::pair(*lo, *hi)) : std::nullopt;
  }
  // The other forms take a constant right-hand side.
  if (r->first != r->second)
    return std::nullopt;
  int64_t c = r->first;
  switch (e.getKind()) {
  case AffineExprKind::Mul: {
    auto a = llvm::checkedMul(l->first, c), b = llvm::checkedMul(l->second, c);
    if (!a || !b)
      return std::nullopt;
    return std::pair(std::min(*a, *b), std::max(*a, *b));
  }
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv: {
    if (c <= 0)
      return std::nullopt;
    bool floor = e.getKind() == AffineExprKind::FloorDiv;
    auto div = [&](int64_t x) {
      return floor ? llvm::divideFloorSigned(x, c)
                   : llvm::divideCeilSigned(x, c);
    };
    return std::pair(div(l->first), div(l->second));
  }
  case AffineExprKind::Mod:
    return c > 0 ? std::optional(std::pair(int64_t(0), c - 1)) : std::nullopt;
  default:
    return std::nullopt;
  }
}

void BlockIdOp::inferResultRanges(ArrayRef<ConstantIntRanges>,
                                  SetIntRangeFn setResultRange) {
  // Below the grid's extent on the axis, and CUDA's: x below 2^31 - 1, y and
  // z below 65535.
  int64_t hi = getDim() == Dimension::x ? (int64_t(1) << 31) - 2 : 65534;
  if (auto kernel = (*this)->getParentOfType<KernelOp>();
      kernel && unsigned(getDim()) < kernel.getGrid().getNumResults())
    if (auto extent = gridExprRange(
            kernel.getGrid().getResult(unsigned(getDim()))))
      hi = std::max<int64_t>(0, std::min(hi, extent->second - 1));
  setResultRange(getResult(), indexRange(hi));
}

void WorkerIdOp::inferResultRanges(ArrayRef<ConstantIntRanges>,
                                   SetIntRangeFn setResultRange) {
  // A worker is one thread or more of a block of at most 1024.
  setResultRange(getResult(), indexRange(1023));
}

LogicalResult WorkerIdOp::verify() {
  if (!(*this)->getParentOfType<BindOp>())
    return emitOpError() << "must be inside a cuir.bind";
  return success();
}

LogicalResult YieldOp::verify() {
  Operation *parent = (*this)->getParentOp();
  if (isa<ScoreModOp, MaskModOp, BlockMaskOp>(parent)) {
    Type expected = isa<ScoreModOp>(parent)
                        ? Type(Float32Type::get(getContext()))
                        : Type(IntegerType::get(getContext(), 1));
    if (getValues().size() != 1 || getValues()[0].getType() != expected)
      return emitOpError() << "must yield exactly one " << expected << " in a "
                           << parent->getName();
    return success();
  }
  if (auto ew = dyn_cast<ElementwiseOp>(parent)) {
    SmallVector<Type> expected =
        llvm::map_to_vector(ew.getResultTypes(), [](Type t) {
          return cast<RankedTensorType>(t).getElementType();
        });
    if (TypeRange(getValues()) != TypeRange(expected)) {
      InFlightDiagnostic diag = emitOpError() << "must yield one element per "
                                                 "result tile of the "
                                                 "cuir.elementwise: ";
      llvm::interleaveComma(expected, diag);
      return diag;
    }
    return success();
  }
  if (auto scatter = dyn_cast<ScatterAddOp>(parent)) {
    int64_t rank = cast<MemRefType>(scatter.getDst().getType()).getRank();
    ValueRange values = getValues();
    bool ok = static_cast<int64_t>(values.size()) == rank + 1 &&
              values.back().getType().isF32() &&
              llvm::all_of(values.drop_back(),
                           [](Value v) { return v.getType().isIndex(); });
    if (!ok)
      return emitOpError() << "must yield " << rank
                           << " index value(s), one per dimension of the "
                              "destination, then the f32 value to add, in a "
                              "cuir.scatter_add body";
    return success();
  }
  if (!getValues().empty())
    return emitOpError() << "a cuir.bind region yields no values; workers "
                            "communicate through memory";
  return success();
}

//===----------------------------------------------------------------------===//
// Memory ops
//===----------------------------------------------------------------------===//

LogicalResult AllocOp::verify() {
  if (failed(verifySpace(*this, getBuffer(), "allocated buffer",
                         {MemorySpace::Shared})))
    return failure();
  if (std::optional<int64_t> swizzle = getSwizzle())
    if (*swizzle != 32 && *swizzle != 64 && *swizzle != 128)
      return emitOpError() << "swizzle must be 32, 64 or 128 bytes, got "
                           << *swizzle;
  return success();
}

/// Common checks of cuir.copy and cuir.copy_async.
template <typename CopyOp>
static LogicalResult verifyTileCopy(CopyOp op) {
  bool srcIndexed = !op.getSrcIndices().empty();
  bool dstIndexed = !op.getDstIndices().empty();
  if (srcIndexed == dstIndexed)
    return op.emitOpError() << "expects exactly one of the source and the "
                               "destination to be indexed, got "
                            << (srcIndexed ? "both" : "neither");
  auto indexed = cast<MemRefType>(op.getIndexedBuffer().getType());
  auto tile = cast<MemRefType>(op.getTileBuffer().getType());
  size_t numIndices =
      srcIndexed ? op.getSrcIndices().size() : op.getDstIndices().size();
  if (numIndices != static_cast<size_t>(indexed.getRank()))
    return op.emitOpError() << "indexes a rank-" << indexed.getRank()
                            << " buffer with " << numIndices << " indices";
  if (indexed.getRank() != tile.getRank())
    return op.emitOpError()
           << "tile buffer has rank " << tile.getRank()
           << " but the indexed buffer has rank " << indexed.getRank()
           << "; take a memref.subview to select the tile's dimensions";
  if (!tile.hasStaticShape())
    return op.emitOpError() << "tile buffer must have a static shape, got "
                            << tile;
  if (indexed.getElementType() != tile.getElementType())
    return op.emitOpError() << "copies between different element types: "
                            << cast<MemRefType>(op.getSrc().getType())
                                   .getElementType()
                            << " and "
                            << cast<MemRefType>(op.getDst().getType())
                                   .getElementType();
  return success();
}

LogicalResult CopyOp::verify() {
  if (failed(verifyTileCopy(*this)))
    return failure();
  for (auto [v, what] : {std::pair<Value, StringRef>(getSrc(), "source"),
                         std::pair<Value, StringRef>(getDst(), "destination")})
    if (failed(verifySpace(*this, v, what,
                           {MemorySpace::Global, MemorySpace::Shared})))
      return failure();
  return success();
}

LogicalResult CopyAsyncOp::verify() {
  if (failed(verifyTileCopy(*this)))
    return failure();
  if (failed(verifySpace(*this, getSrc(), "source", {MemorySpace::Global})) ||
      failed(verifySpace(*this, getDst(), "destination",
                         {MemorySpace::Shared})))
    return failure();
  if (getSrcIndices().empty())
    return emitOpError() << "must index its global source";
  bool tma = getEngine() == CopyEngine::Tma;
  if (tma && !getBarrier())
    return emitOpError() << "a TMA copy completes on an mbarrier; add "
                            "'barrier %bars[%i]'";
  if (!tma && getBarrier())
    return emitOpError() << "a cp.async copy completes through "
                            "cuir.commit/cuir.wait_group, not an mbarrier";
  if (tma && getToken())
    return emitOpError() << "a TMA copy returns no token";
  if (!tma && !getToken())
    return emitOpError() << "a cp.async copy must return a !cuir.token";
  if (getBarrier() && !getBarrierIndex())
    return emitOpError() << "needs the index of the barrier";
  if (Value token = getToken()) {
    if (token.use_empty())
      return emitOpError() << "starts a cp.async copy that is never "
                              "committed, so it can never be waited for";
  }
  return success();
}

LogicalResult CommitOp::verify() {
  for (Value token : getTokens()) {
    Operation *def = token.getDefiningOp();
    if (def && !isa<CopyAsyncOp>(def))
      return emitOpError() << "commits a token that does not come from "
                              "cuir.copy_async but from '"
                           << def->getName() << "'";
    if (!token.hasOneUse()) {
      auto diag = emitOpError() << "commits a copy that is committed more "
                                   "than once";
      for (Operation *user : token.getUsers())
        if (user != getOperation())
          diag.attachNote(user->getLoc()) << "also committed here";
      return diag;
    }
  }
  return success();
}

LogicalResult WaitGroupOp::verify() {
  Operation *def = getGroup().getDefiningOp();
  if (def && !isa<CommitOp>(def) && !isa<RegionBranchOpInterface>(def))
    return emitOpError() << "waits on a group that does not come from "
                            "cuir.commit but from '"
                         << def->getName() << "'";
  for (Operation *user : getGroup().getUsers()) {
    if (user == getOperation() || !isa<WaitGroupOp>(user))
      continue;
    if (user->getBlock() == (*this)->getBlock() &&
        user->isBeforeInBlock(getOperation()))
    {
      InFlightDiagnostic diag = emitOpError()
                                << "waits on a copy group that was already "
                                   "waited for";
      diag.attachNote(user->getLoc()) << "first waited here";
      return diag;
    }
  }
  return success();
}

LogicalResult LoadOp::verify() {
  if (failed(verifySpace(*this, getSrc(), "source", {MemorySpace::Shared})))
    return failure();
  FailureOr<FragmentLayoutAttr> layout =
      verifyFragment(*this, getResult().getType(), "result");
  if (failed(layout))
    return failure();
  auto src = cast<MemRefType>(getSrc().getType());
  if (layout->getKind() == FragmentKind::Row &&
      (src.getRank() != 1 || getTranspose()))
    return emitOpError() << "loads a row vector only from a 1-D tile, "
                            "untransposed; operand fragments (a, b, acc) "
                            "from 2-D tiles";
  auto res = getResult().getType();
  if (src.getElementType() != res.getElementType())
    return emitOpError() << "loads " << src.getElementType()
                         << " elements into a tile of " << res.getElementType();
  SmallVector<int64_t> shape(src.getShape());
  if (getTranspose()) {
    if (shape.size() != 2)
      return emitOpError() << "transposes only 2-D tiles";
    std::swap(shape[0], shape[1]);
  }
  if (ArrayRef<int64_t>(shape) != res.getShape())
    return emitOpError() << "result shape " << res
                         << " does not match the source tile "
                         << (getTranspose() ? "transposed " : "") << src;
  return success();
}

LogicalResult StoreOp::verify() {
  FailureOr<FragmentLayoutAttr> layout =
      verifyFragment(*this, getValue().getType(), "stored value");
  if (failed(layout))
    return failure();
  if (failed(verifySpace(*this, getDst(), "destination",
                         {MemorySpace::Shared, MemorySpace::Global})))
    return failure();
  auto dst = cast<MemRefType>(getDst().getType());
  auto val = getValue().getType();
  if (dst.getElementType() != val.getElementType())
    return emitOpError() << "stores " << val.getElementType()
                         << " elements into a buffer of "
                         << dst.getElementType();
  if (dst.getRank() != val.getRank())
    return emitOpError() << "stores a rank-" << val.getRank()
                         << " tile into a rank-" << dst.getRank()
                         << " buffer";
  bool global = *getMemorySpace(dst) == MemorySpace::Global;
  if (global && getIndices().size() != static_cast<size_t>(dst.getRank()))
    return emitOpError() << "needs " << dst.getRank()
                         << " indices to place the tile in global memory, got "
                         << getIndices().size();
  if (!global && getIndices().empty() && dst.getShape() != val.getShape())
    return emitOpError() << "stores a tile of shape " << val
                         << " into a shared buffer of another shape " << dst;
  if (!global && !getIndices().empty() &&
      getIndices().size() != static_cast<size_t>(dst.getRank()))
    return emitOpError() << "needs " << dst.getRank() << " indices, got "
                         << getIndices().size();
  return success();
}

LogicalResult AtomicAddOp::verify() {
  if (failed(verifyFragment(*this, getValue().getType(), "added value")) ||
      failed(
          verifySpace(*this, getDst(), "destination", {MemorySpace::Global})))
    return failure();
  auto dst = cast<MemRefType>(getDst().getType());
  auto val = getValue().getType();
  if (!val.getElementType().isF32() || !dst.getElementType().isF32())
    return emitOpError() << "adds f32 elements into an f32 buffer "
                            "(red.global.add.f32), not "
                         << val.getElementType() << " into "
                         << dst.getElementType();
  if (dst.getRank() != val.getRank())
    return emitOpError() << "adds a rank-" << val.getRank()
                         << " tile into a rank-" << dst.getRank() << " buffer";
  if (getIndices().size() != static_cast<size_t>(dst.getRank()))
    return emitOpError() << "needs " << dst.getRank()
                         << " indices to place the tile, got "
                         << getIndices().size();
  return success();
}

//===----------------------------------------------------------------------===//
// GEMMs
//===----------------------------------------------------------------------===//

/// Shape and element type of a GEMM operand that is a register fragment or a
/// shared-memory tile.
static FailureOr<std::pair<SmallVector<int64_t>, Type>>
verifyGemmOperand(Operation *op, Value v, StringRef what, FragmentKind kind,
                  FragmentLayoutAttr accLayout, bool allowRegister) {
  Type t = v.getType();
  if (auto memref = dyn_cast<MemRefType>(t)) {
    if (failed(verifySpace(op, v, "operand '" + what.str() + "'",
                           {MemorySpace::Shared})))
      return failure();
    if (memref.getRank() != 2)
      return op->emitOpError() << "operand '" << what
                               << "' must be a 2-D tile, got " << memref;
    return std::make_pair(SmallVector<int64_t>(memref.getShape()),
                          memref.getElementType());
  }
  if (!allowRegister)
    return op->emitOpError() << "operand '" << what
                             << "' must be a shared-memory tile, got " << t;
  FailureOr<FragmentLayoutAttr> layout =
      verifyFragment(op, t, "operand '" + what.str() + "'", kind);
  if (failed(layout))
    return failure();
  if (layout->getInstr() != accLayout.getInstr() ||
      layout->getWarps() != accLayout.getWarps())
    return op->emitOpError() << "operand '" << what << "' layout " << *layout
                             << " does not match the accumulator layout "
                             << accLayout;
  auto tensor = cast<RankedTensorType>(t);
  return std::make_pair(SmallVector<int64_t>(tensor.getShape()),
                        tensor.getElementType());
}

template <typename GemmOp>
static LogicalResult verifyGemm(GemmOp op, bool async) {
  FailureOr<FragmentLayoutAttr> acc = verifyFragment(
      op, op.getAcc().getType(), "accumulator", FragmentKind::Acc);
  if (failed(acc))
    return failure();
  MmaInstr expected = async ? MmaInstr::WgmmaM64NK16 : MmaInstr::MmaM16N8K16;
  if (acc->getInstr() != expected)
    return op.emitOpError()
           << (async ? "asynchronous GEMMs run on wgmma" : "synchronous GEMMs run on mma.sync")
           << "; the accumulator must use the "
           << stringifyMmaInstr(expected) << " layout, not "
           << stringifyMmaInstr(acc->getInstr());
  bool transposeB = op.getTransposeB();
  if (transposeB && !isa<MemRefType>(op.getB().getType()))
    return op.emitOpError() << "transpose_b applies to a shared-memory B "
                               "tile; a register B fragment is already K x N";
  auto a = verifyGemmOperand(op, op.getA(), "a", FragmentKind::A, *acc, true);
  if (failed(a))
    return failure();
  auto b = verifyGemmOperand(op, op.getB(), "b", FragmentKind::B, *acc,
                             /*allowRegister=*/!async);
  if (failed(b))
    return failure();
  auto accType = cast<RankedTensorType>(op.getAcc().getType());
  int64_t m = accType.getShape()[0], n = accType.getShape()[1];
  auto &aShape = a->first;
  SmallVector<int64_t> bShape = b->first;
  if (transposeB)
    std::swap(bShape[0], bShape[1]);
  if (aShape[0] != m)
    return op.emitOpError() << "operand 'a' has " << aShape[0]
                            << " rows but the accumulator has " << m;
  if (bShape[1] != n)
    return op.emitOpError() << "operand 'b' has " << bShape[1]
                            << " columns (N) but the accumulator has " << n;
  if (aShape[1] != bShape[0])
    return op.emitOpError() << "reduction dimensions differ: 'a' is " << m
                            << "x" << aShape[1] << " and 'b' is " << bShape[0]
                            << "x" << n << (transposeB ? " (transposed)" : "");
  if (aShape[1] % 16 != 0)
    return op.emitOpError() << "reduction dimension " << aShape[1]
                            << " must be a multiple of 16";
  if (!isGemmElementType(a->second) || a->second != b->second)
    return op.emitOpError() << "operands must both be bf16 or both f16, got "
                            << a->second << " and " << b->second;
  Type accElt = accType.getElementType();
  if (!accElt.isF32() && !accElt.isF16())
    return op.emitOpError() << "accumulates in f32 or f16, not " << accElt;
  return success();
}

LogicalResult GemmOp::verify() { return verifyGemm(*this, /*async=*/false); }

LogicalResult GemmAsyncOp::verify() {
  if (failed(verifyGemm(*this, /*async=*/true)))
    return failure();
  // Transposed registers: the layout distributes the [n x m] product.
  if (getAccTransposed()) {
    auto accType = cast<RankedTensorType>(getAcc().getType());
    SmallVector<int64_t> shape = llvm::to_vector(llvm::reverse(accType.getShape()));
    if (failed(getFragmentLayout(accType).verifyShape(
            shape, [&] { return emitOpError() << "acc_transposed: "; })))
      return failure();
  }
  // The result is in flight until a gemm_wait: only waits, chained GEMMs and
  // control flow that carries it on may see it.
  for (OpOperand &use : getResult().getUses()) {
    Operation *user = use.getOwner();
    if (isa<GemmWaitOp>(user))
      continue;
    if (auto next = dyn_cast<GemmAsyncOp>(user);
        next && use.getOperandNumber() == 2)
      continue;
    if (isa<RegionBranchOpInterface, RegionBranchTerminatorOpInterface,
            BranchOpInterface>(user))
      continue;
    InFlightDiagnostic diag =
        emitOpError() << "result is used by '" << user->getName()
                      << "' before its cuir.gemm_wait: the tensor cores may "
                         "still be writing it";
    diag.attachNote(user->getLoc()) << "used here";
    return diag;
  }
  return success();
}

/// `pending 1` or `pending %n`.
static ParseResult
parsePendingCount(OpAsmParser &parser,
                  std::optional<OpAsmParser::UnresolvedOperand> &count,
                  IntegerAttr &pending) {
  OpAsmParser::UnresolvedOperand operand;
  OptionalParseResult value = parser.parseOptionalOperand(operand);
  if (value.has_value()) {
    if (failed(*value))
      return failure();
    count = operand;
    return success();
  }
  int64_t n;
  if (parser.parseInteger(n))
    return failure();
  pending = parser.getBuilder().getI64IntegerAttr(n);
  return success();
}

static void printPendingCount(OpAsmPrinter &printer, GemmWaitOp,
                              Value count, IntegerAttr pending) {
  if (count)
    printer << count;
  else
    printer << pending.getInt();
}

LogicalResult GemmWaitOp::verify() {
  if (static_cast<bool>(getPendingCount()) == getPending().has_value())
    return emitOpError() << "needs one pending count: a constant or an index "
                            "value";
  if (failed(verifyFragment(*this, getAcc().getType(), "accumulator",
                            FragmentKind::Acc)))
    return failure();
  Operation *def = getAcc().getDefiningOp();
  if (def && !isa<GemmAsyncOp>(def) && !isa<RegionBranchOpInterface>(def))
    return emitOpError() << "waits on a value produced by '" << def->getName()
                         << "', not by cuir.gemm_async";
  return success();
}

//===----------------------------------------------------------------------===//
// Register-tile ops
//===----------------------------------------------------------------------===//

LogicalResult ReduceRowsOp::verify() {
  auto in = verifyFragment(*this, getInput().getType(), "input",
                           FragmentKind::Acc);
  if (failed(in))
    return failure();
  auto out =
      verifyFragment(*this, getResult().getType(), "result", FragmentKind::Row);
  if (failed(out))
    return failure();
  if (in->getInstr() != out->getInstr() || in->getWarps() != out->getWarps())
    return emitOpError() << "result layout " << *out
                         << " is not the row layout of " << *in;
  auto inT = cast<RankedTensorType>(getInput().getType());
  auto outT = cast<RankedTensorType>(getResult().getType());
  if (inT.getShape()[0] != outT.getShape()[0])
    return emitOpError() << "reduces " << inT.getShape()[0]
                         << " rows into a vector of " << outT.getShape()[0];
  if (inT.getElementType() != outT.getElementType())
    return emitOpError() << "changes the element type from "
                         << inT.getElementType() << " to "
                         << outT.getElementType();
  return success();
}

LogicalResult BroadcastRowsOp::verify() {
  auto in =
      verifyFragment(*this, getInput().getType(), "input", FragmentKind::Row);
  if (failed(in))
    return failure();
  auto out = verifyFragment(*this, getResult().getType(), "result",
                            FragmentKind::Acc);
  if (failed(out))
    return failure();
  if (in->getInstr() != out->getInstr() || in->getWarps() != out->getWarps())
    return emitOpError() << "input layout " << *in
                         << " is not the row layout of " << *out;
  auto inT = cast<RankedTensorType>(getInput().getType());
  auto outT = cast<RankedTensorType>(getResult().getType());
  if (inT.getShape()[0] != outT.getShape()[0])
    return emitOpError() << "broadcasts " << inT.getShape()[0]
                         << " rows into a tile of " << outT.getShape()[0];
  if (inT.getElementType() != outT.getElementType())
    return emitOpError() << "changes the element type from "
                         << inT.getElementType() << " to "
                         << outT.getElementType();
  return success();
}

LogicalResult ConvertLayoutOp::verify() {
  if (failed(verifyFragment(*this, getInput().getType(), "input")) ||
      failed(verifyFragment(*this, getResult().getType(), "result")))
    return failure();
  auto inT = cast<RankedTensorType>(getInput().getType());
  auto outT = cast<RankedTensorType>(getResult().getType());
  if (getTranspose()) {
    if (inT.getRank() != 2 || outT.getRank() != 2 ||
        inT.getDimSize(0) != outT.getDimSize(1) ||
        inT.getDimSize(1) != outT.getDimSize(0) ||
        inT.getElementType() != outT.getElementType())
      return emitOpError() << "with 'transpose' gives the transpose of a 2-D "
                              "tile; "
                           << outT << " is not the transpose of " << inT;
    return success();
  }
  if (inT.getShape() != outT.getShape() ||
      inT.getElementType() != outT.getElementType())
    return emitOpError() << "changes only the layout; " << inT << " and "
                         << outT << " differ in shape or element type";
  return success();
}

ParseResult ElementwiseOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::UnresolvedOperand> inputs, coords;
  SmallVector<Type> inputTypes, resultTypes;
  if (parser.parseOperandList(inputs, OpAsmParser::Delimiter::Paren) ||
      parser.parseKeyword("at") ||
      parser.parseOperandList(coords, 4, OpAsmParser::Delimiter::Square) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseLParen())
    return failure();
  if (failed(parser.parseOptionalRParen()) &&
      (parser.parseTypeList(inputTypes) || parser.parseRParen()))
    return failure();
  if (parser.parseArrowTypeList(resultTypes))
    return failure();
  if (parser.resolveOperands(inputs, inputTypes, parser.getNameLoc(),
                             result.operands) ||
      parser.resolveOperands(coords, parser.getBuilder().getIndexType(),
                             result.operands))
    return failure();
  result.addTypes(resultTypes);
  Region *body = result.addRegion();
  if (parser.parseRegion(*body))
    return failure();
  ElementwiseOp::ensureTerminator(*body, parser.getBuilder(), result.location);
  return success();
}

void ElementwiseOp::print(OpAsmPrinter &p) {
  p << " (" << getInputs() << ") at [" << getB() << ", " << getH() << ", "
    << getQBase() << ", " << getKvBase() << "]";
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : (" << getInputs().getTypes() << ")";
  p.printArrowTypeList(getResultTypes());
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/true);
}

/// Checks what cuir.elementwise and cuir.scatter_add share: one or more 2-D
/// input tiles of one shape and layout, and a body over one element of each
/// plus the (b, h, q_idx, kv_idx) coordinates.
static LogicalResult verifyTileRegion(Operation *op, ValueRange inputs,
                                      Block &body) {
  if (inputs.empty())
    return op->emitOpError() << "needs at least one input tile";
  auto first = cast<RankedTensorType>(inputs[0].getType());
  if (first.getRank() != 2)
    return op->emitOpError()
           << "works on 2-D (query x key) tiles, got " << first;
  for (Value in : inputs) {
    auto t = cast<RankedTensorType>(in.getType());
    if (t.getShape() != first.getShape() ||
        t.getEncoding() != first.getEncoding())
      return op->emitOpError() << "inputs must share one shape and layout; "
                               << first << " and " << t << " differ";
  }
  size_t n = inputs.size();
  if (body.getNumArguments() != n + 4)
    return op->emitOpError()
           << "body must take " << n
           << " element(s) and the coordinates (b, h, q_idx, kv_idx), i.e. "
           << n + 4 << " arguments, got " << body.getNumArguments();
  for (size_t i = 0; i < n; ++i) {
    Type want = cast<RankedTensorType>(inputs[i].getType()).getElementType();
    if (body.getArgument(i).getType() != want)
      return op->emitOpError() << "body argument #" << i << " must be " << want
                               << ", the element type of input #" << i;
  }
  for (size_t i = n; i < n + 4; ++i)
    if (!body.getArgument(i).getType().isIndex())
      return op->emitOpError()
             << "coordinate argument #" << i << " must be index";
  return success();
}

LogicalResult ElementwiseOp::verify() {
  if (failed(verifyTileRegion(*this, getInputs(), getBody().front())))
    return failure();
  if (getResults().empty())
    return emitOpError() << "needs at least one result tile";
  auto first = cast<RankedTensorType>(getInputs()[0].getType());
  for (Type t : getResultTypes()) {
    auto res = cast<RankedTensorType>(t);
    if (res.getShape() != first.getShape() ||
        res.getEncoding() != first.getEncoding())
      return emitOpError() << "result " << res
                           << " must have the inputs' shape and layout";
  }
  return success();
}

ParseResult ScatterAddOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::UnresolvedOperand> inputs, coords;
  OpAsmParser::UnresolvedOperand dst;
  SmallVector<Type> inputTypes;
  Type dstType;
  if (parser.parseOperandList(inputs, OpAsmParser::Delimiter::Paren) ||
      parser.parseKeyword("at") ||
      parser.parseOperandList(coords, 4, OpAsmParser::Delimiter::Square) ||
      parser.parseKeyword("into") || parser.parseOperand(dst) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseLParen())
    return failure();
  if (failed(parser.parseOptionalRParen()) &&
      (parser.parseTypeList(inputTypes) || parser.parseRParen()))
    return failure();
  if (parser.parseArrow() || parser.parseType(dstType) ||
      parser.resolveOperands(inputs, inputTypes, parser.getNameLoc(),
                             result.operands) ||
      parser.resolveOperands(coords, parser.getBuilder().getIndexType(),
                             result.operands) ||
      parser.resolveOperand(dst, dstType, result.operands))
    return failure();
  return parser.parseRegion(*result.addRegion());
}

void ScatterAddOp::print(OpAsmPrinter &p) {
  p << " (" << getInputs() << ") at [" << getB() << ", " << getH() << ", "
    << getQBase() << ", " << getKvBase() << "] into " << getDst();
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : (" << getInputs().getTypes() << ") -> " << getDst().getType() << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/true);
}

LogicalResult ScatterAddOp::verify() {
  Block &body = getBody().front();
  if (failed(verifyTileRegion(*this, getInputs(), body)))
    return failure();
  if (failed(
          verifySpace(*this, getDst(), "destination", {MemorySpace::Global})))
    return failure();
  auto dst = cast<MemRefType>(getDst().getType());
  if (!dst.getElementType().isF32())
    return emitOpError() << "adds f32 values (red.global.add.f32) into an "
                            "f32 buffer, not into "
                         << dst.getElementType();
  if (body.empty() || !isa<YieldOp>(body.back()))
    return emitOpError() << "body must end in a cuir.yield of the indices "
                            "and the value to add";
  return success();
}

//===----------------------------------------------------------------------===//
// Synchronisation
//===----------------------------------------------------------------------===//

LogicalResult BarrierNamedOp::verify() {
  if (getThreads() % 32 != 0)
    return emitOpError() << "named barriers count whole warps; " << getThreads()
                         << " threads is not a multiple of 32";
  if (auto kernel = (*this)->getParentOfType<KernelOp>())
    if (getThreads() > kernel.getThreads())
      return emitOpError() << "waits for " << getThreads()
                           << " threads but the block has only "
                           << kernel.getThreads();
  if (std::optional<int64_t> id = getConstantIntValue(getId()))
    if (*id < 1 || *id > 15)
      return emitOpError() << "named barrier id must be in [1, 15] (0 is the "
                              "block barrier), got "
                           << *id;
  return success();
}

//===----------------------------------------------------------------------===//
// Variants
//===----------------------------------------------------------------------===//

ParseResult VariantOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::Argument> args;
  if (parseSymbolAndSignature(parser, result, args,
                              getFunctionTypeAttrName(result.name),
                              getArgAttrsAttrName(result.name),
                              /*resAttrsName=*/StringAttr()))
    return failure();
  Builder &b = parser.getBuilder();
  StringRef norm;
  SMLoc normLoc = parser.getCurrentLocation();
  if (parser.parseKeyword("normalizer") || parser.parseKeyword(&norm))
    return failure();
  std::optional<Normalizer> n = symbolizeNormalizer(norm);
  if (!n)
    return parser.emitError(normLoc, "unknown normalizer '")
           << norm << "'; expected softmax or sigmoid";
  result.addAttribute(getNormalizerAttrName(result.name),
                      NormalizerAttr::get(b.getContext(), *n));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, args))
    return failure();
  if (body->empty())
    body->emplaceBlock();
  return success();
}

void VariantOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  call_interface_impl::printFunctionSignature(
      p, getFunctionType().getInputs(), getArgAttrsAttr(), false, {}, {},
      &getBody(), /*printEmptyResult=*/false);
  p << " normalizer " << stringifyNormalizer(getNormalizer());
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(),
      {getSymNameAttrName(), getFunctionTypeAttrName(), getNormalizerAttrName(),
       getArgAttrsAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

ScoreModOp VariantOp::getScoreMod() {
  auto ops = getBody().front().getOps<ScoreModOp>();
  return ops.empty() ? ScoreModOp() : *ops.begin();
}

MaskModOp VariantOp::getMaskMod() {
  auto ops = getBody().front().getOps<MaskModOp>();
  return ops.empty() ? MaskModOp() : *ops.begin();
}

ScoreGradOp VariantOp::getScoreGrad() {
  auto ops = getBody().front().getOps<ScoreGradOp>();
  return ops.empty() ? ScoreGradOp() : *ops.begin();
}

StringRef VariantOp::getParamName(unsigned i) {
  if (auto dict = getArgAttrsAttr())
    if (auto d = dyn_cast<DictionaryAttr>(dict[i]))
      if (auto n = d.getAs<StringAttr>("cuir.param"))
        return n.getValue();
  return "";
}

/// Whether `t` is an element type a captured tensor may have.
static bool isTensorElementType(Type t) {
  return t.isInteger(1) || t.isInteger(32) || t.isInteger(64) || t.isF16() ||
         t.isBF16() || t.isF32();
}

/// A captured tensor: a static shape, the identity layout, global memory,
/// one of the tracer's element types and an optional dense default of the
/// same type.
static LogicalResult verifyStaticArrayParam(VariantOp op, StringRef name,
                                            MemRefType memref,
                                            DictionaryAttr attrs) {
  auto err = [&]() {
    return op.emitOpError() << "array parameter '" << name << "' ";
  };
  if (memref.getRank() == 0)
    return err() << "is rank 0; a 0-d value is a constant, not a parameter";
  if (llvm::is_contained(memref.getShape(), 0))
    return err() << "has no elements (shape " << memref << ")";
  if (!memref.getLayout().isIdentity())
    return err() << "must have the identity (row-major, contiguous) layout, "
                    "not "
                 << memref.getLayout();
  if (!isTensorElementType(memref.getElementType()))
    return err() << "has element type " << memref.getElementType()
                 << "; captured tensors are i1, i32, i64, f16, bf16 or f32";
  std::optional<MemorySpace> space = getMemorySpace(memref);
  if (!space || *space != MemorySpace::Global)
    return err() << "must be in #cuir.mem<global>";
  if (attrs.get(CuIRDialect::ExtentAttrHelper::getNameStr()))
    return err() << "has a static shape; cuir.extent is only for dynamic "
                    "1-D parameters";
  Attribute def = attrs.get(CuIRDialect::DefaultAttrHelper::getNameStr());
  if (!def)
    return success();
  auto dense = dyn_cast<DenseElementsAttr>(def);
  auto want = RankedTensorType::get(memref.getShape(), memref.getElementType());
  if (!dense)
    return err() << "needs a cuir.default of type " << want
                 << " (dense<...>), not " << def;
  if (dense.getType() != want)
    return err() << "has a cuir.default of type " << dense.getType()
                 << "; its type is " << memref << ", so the default must be "
                 << want;
  return success();
}

/// A built-in array parameter: 1-D, its length given by cuir.extent.
static LogicalResult verifyDynamicArrayParam(VariantOp op, StringRef name,
                                             MemRefType memref,
                                             DictionaryAttr attrs) {
  if (memref.getRank() != 1)
    return op.emitOpError() << "array parameter '" << name
                            << "' of dynamic shape must be one-dimensional";
  auto extent = attrs.getAs<StringAttr>(
      CuIRDialect::ExtentAttrHelper::getNameStr());
  if (!extent ||
      !llvm::is_contained({StringRef("batch"), StringRef("heads"),
                           StringRef("batch*kv")},
                          extent.getValue()))
    return op.emitOpError() << "array parameter '" << name
                            << "' needs cuir.extent = \"batch\", \"heads\" "
                               "or \"batch*kv\" (or a static shape)";
  return success();
}

/// Whether `name` can name a C++ struct member: an identifier that is not
/// a keyword.
static bool isCIdentifier(StringRef name) {
  static const llvm::StringSet<> keywords = {
      "alignas",   "alignof",  "and",      "asm",      "auto",      "bool",
      "break",     "case",     "catch",    "char",     "class",     "const",
      "constexpr", "continue", "decltype", "default",  "delete",    "do",
      "double",    "else",     "enum",     "explicit", "export",    "extern",
      "false",     "float",    "for",      "friend",   "goto",      "if",
      "inline",    "int",      "long",     "mutable",  "namespace", "new",
      "noexcept",  "not",      "nullptr",  "operator", "or",        "private",
      "protected", "public",   "register", "return",   "short",     "signed",
      "sizeof",    "static",   "struct",   "switch",   "template",  "this",
      "throw",     "true",     "try",      "typedef",  "typeid",    "typename",
      "union",     "unsigned", "using",    "virtual",  "void",      "volatile",
      "while",     "xor"};
  if (name.empty() || llvm::isDigit(name.front()) ||
      !llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
    return false;
  return !keywords.contains(name);
}

/// Finite float constants of a score_mod stay below 2^126 in magnitude: the
/// kernels scale scores by log2(e) (and the softmax scale) for exp2, and a
/// larger one (torch.finfo(torch.float32).min as a mask value) overflows to
/// infinity there, where PyTorch computes with it as a finite number.
static LogicalResult verifyScoreConstants(VariantOp variant) {
  const double limit = std::ldexp(1.0, 126);
  for (ScoreModOp mod : variant.getBody().front().getOps<ScoreModOp>()) {
    WalkResult walk = mod.walk([&](arith::ConstantOp cst) {
      auto value = dyn_cast<FloatAttr>(cst.getValue());
      if (!value || !std::isfinite(value.getValueAsDouble()) ||
          std::fabs(value.getValueAsDouble()) < limit)
        return WalkResult::advance();
      cst.emitOpError()
          << "is " << value.getValueAsDouble()
          << " in a score_mod: a finite score of magnitude 2^126 or more "
             "overflows float32 where the kernels scale scores by log2(e), "
             "and would not be the finite number PyTorch computes with. Mask "
             "with -inf, or use a smaller value (-1e4, which the backward "
             "also takes)";
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  return success();
}

LogicalResult VariantOp::verify() {
  if (!getFunctionType().getResults().empty())
    return emitOpError() << "a variant returns nothing";
  Block &body = getBody().front();
  llvm::SmallSet<StringRef, 8> names;
  for (unsigned i = 0, e = body.getNumArguments(); i < e; ++i) {
    StringRef name = getParamName(i);
    if (name.empty())
      return emitOpError() << "parameter #" << i
                           << " needs a name: {cuir.param = \"...\"}";
    if (!names.insert(name).second)
      return emitOpError() << "parameter '" << name << "' is declared twice";
    bool isSize = llvm::is_contained({"B", "Hq", "Hkv", "Nq", "Nkv"}, name);
    if (isSize && !body.getArgument(i).getType().isIndex())
      return emitOpError() << "parameter '" << name
                           << "' has the name of a size of the kernel, which "
                              "it stands for: it must be an index, not "
                           << body.getArgument(i).getType();
    // The mask analysis and the lowering read an index as a size, in
    // [0, 2^30), written as a C++ int.
    if (!isSize && body.getArgument(i).getType().isIndex())
      return emitOpError() << "parameter '" << name
                           << "' is an index, which only a size of the kernel "
                              "(B, Hq, Hkv, Nq, Nkv) may be: declare it i32 or "
                              "i64";
    if (!isCIdentifier(name))
      return emitOpError() << "parameter name '" << name
                           << "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*,"
                              " not a C++ keyword): it names a field of the "
                              "kernel's params struct";
    Type t = body.getArgument(i).getType();
    auto attrs = cast<DictionaryAttr>(getArgAttrsAttr()[i]);
    if (auto memref = dyn_cast<MemRefType>(t)) {
      if (failed(memref.hasStaticShape()
                     ? verifyStaticArrayParam(*this, name, memref, attrs)
                     : verifyDynamicArrayParam(*this, name, memref, attrs)))
        return failure();
    } else if (!t.isF32() && !t.isInteger(32) && !t.isInteger(64) &&
               !t.isIndex()) {
      return emitOpError() << "parameter '" << name
                           << "' must be f32, i32, i64, index or a memref, "
                              "not "
                           << t;
    }
  }
  int scores = 0, masks = 0, grads = 0;
  for (Operation &op : body) {
    if (isa<ScoreModOp>(op))
      ++scores;
    else if (isa<MaskModOp>(op))
      ++masks;
    else if (isa<ScoreGradOp>(op))
      ++grads;
    else
      return op.emitOpError() << "is not allowed directly in a cuir.variant; "
                                 "only cuir.score_mod, cuir.mask_mod and "
                                 "cuir.score_grad";
  }
  if (scores > 1 || masks > 1 || grads > 1)
    return emitOpError() << "has at most one cuir.score_mod, one "
                            "cuir.mask_mod and one cuir.score_grad";
  if (grads && !scores)
    return emitOpError() << "has a cuir.score_grad but no cuir.score_mod "
                            "for it to differentiate";
  return verifyScoreConstants(*this);
}

static LogicalResult verifyModArgs(Operation *op, Block &body, bool score) {
  unsigned want = score ? 5 : 4;
  if (body.getNumArguments() != want)
    return op->emitOpError()
           << "body must take " << (score ? "(score: f32, " : "(")
           << "b, h, q_idx, kv_idx: index), " << want << " arguments, got "
           << body.getNumArguments();
  for (unsigned i = 0; i < want; ++i) {
    Type t = body.getArgument(i).getType();
    bool ok = (score && i == 0) ? t.isF32() : t.isIndex();
    if (!ok)
      return op->emitOpError() << "body argument #" << i << " must be "
                               << ((score && i == 0) ? "f32" : "index");
  }
  return success();
}

LogicalResult ScoreModOp::verify() {
  return verifyModArgs(*this, getBody().front(), /*score=*/true);
}

LogicalResult MaskModOp::verify() {
  return verifyModArgs(*this, getBody().front(), /*score=*/false);
}

GradYieldOp ScoreGradOp::getYield() {
  return dyn_cast<GradYieldOp>(getBody().front().getTerminator());
}

/// The float array parameter of the enclosing variant that `load` reads, or
/// null.
static BlockArgument getFloatParam(memref::LoadOp load, VariantOp variant) {
  auto arg = dyn_cast<BlockArgument>(load.getMemRef());
  if (!arg || arg.getOwner() != &variant.getBody().front() ||
      !isa<FloatType>(load.getType()))
    return {};
  return arg;
}

SmallVector<memref::LoadOp> ScoreGradOp::getParamLoads() {
  auto variant = (*this)->getParentOfType<VariantOp>();
  SmallVector<memref::LoadOp> loads;
  getBody().walk([&](memref::LoadOp load) {
    if (getFloatParam(load, variant))
      loads.push_back(load);
  });
  return loads;
}

LogicalResult ScoreGradOp::verify() {
  if (failed(verifyModArgs(*this, getBody().front(), /*score=*/true)))
    return failure();
  Block &body = getBody().front();
  if (body.empty() || !isa<GradYieldOp>(body.back()))
    return emitOpError() << "body must end in a cuir.grad_yield";
  llvm::SmallPtrSet<Value, 8> listed(getYield().getElements().begin(),
                                     getYield().getElements().end());
  for (memref::LoadOp load : getParamLoads()) {
    if (listed.contains(load.getResult()))
      continue;
    InFlightDiagnostic diag =
        emitOpError() << "has no partial derivative for an element of a float "
                         "parameter (its cuir.grad_yield lists every load of "
                         "one)";
    diag.attachNote(load.getLoc()) << "loaded here";
    return diag;
  }
  return success();
}

LogicalResult GradYieldOp::verify() {
  if (getElements().size() != getPartials().size())
    return emitOpError() << "lists " << getElements().size() << " elements but "
                         << getPartials().size() << " partial derivatives";
  auto grad = (*this)->getParentOfType<ScoreGradOp>();
  auto variant = grad->getParentOfType<VariantOp>();
  for (auto [i, element] : llvm::enumerate(getElements())) {
    auto load = element.getDefiningOp<memref::LoadOp>();
    if (!load || !getFloatParam(load, variant) ||
        !grad.getBody().isAncestor(load->getParentRegion()))
      return emitOpError() << "element #" << i
                           << " must be a memref.load of a float parameter "
                              "of the variant in this cuir.score_grad";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Block masks
//===----------------------------------------------------------------------===//

void BlockMaskOp::build(OpBuilder &builder, OperationState &state,
                        StringRef name, ArrayRef<Type> argTypes,
                        ArrayRef<DictionaryAttr> argAttrs, int64_t blockM,
                        int64_t blockN, MaskDims depends) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name),
                     TypeAttr::get(builder.getFunctionType(argTypes, {})));
  state.addAttribute(getBlockMAttrName(state.name),
                     builder.getI64IntegerAttr(blockM));
  state.addAttribute(getBlockNAttrName(state.name),
                     builder.getI64IntegerAttr(blockN));
  state.addAttribute(getDependsAttrName(state.name),
                     MaskDimsAttr::get(builder.getContext(), depends));
  if (!argAttrs.empty())
    state.addAttribute(getArgAttrsAttrName(state.name),
                       builder.getArrayAttr(SmallVector<Attribute>(
                           argAttrs.begin(), argAttrs.end())));
  // The entry block: (b, h, q, kv), then the arguments. The caller adds the
  // body and its cuir.yield.
  Region *body = state.addRegion();
  Block *entry = new Block();
  for (int i = 0; i < 4; ++i)
    entry->addArgument(builder.getIndexType(), state.location);
  for (Type t : argTypes)
    entry->addArgument(t, state.location);
  body->push_back(entry);
}

StringRef BlockMaskOp::getArgRole(unsigned i) {
  if (ArrayAttr all = getArgAttrsAttr(); all && i < all.size())
    if (auto dict = dyn_cast_or_null<DictionaryAttr>(all[i]))
      if (auto role =
              dict.getAs<StringAttr>(CuIRDialect::ArgAttrHelper::getNameStr()))
        return role.getValue();
  return "";
}

/// %b, %h, %q, %kv, and the arguments by the kernel arguments they stand
/// for (%Nkv, %doc_ids for "param:doc_ids").
void BlockMaskOp::getAsmBlockArgumentNames(Region &region,
                                           OpAsmSetValueNameFn setName) {
  static constexpr StringLiteral coords[] = {"b", "h", "q", "kv"};
  for (auto [i, arg] : llvm::enumerate(region.front().getArguments())) {
    if (i < 4) {
      setName(arg, coords[i]);
      continue;
    }
    StringRef role = getArgRole(i - 4);
    if (std::optional<StringRef> param = variantParamName(role))
      role = *param;
    if (!role.empty())
      setName(arg, role);
  }
}

Value BlockMaskOp::getVisible() {
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  return yield.getValues().empty() ? Value() : yield.getValues()[0];
}

/// `depends [batch, heads]` (or `kv_heads`); absent means none.
static ParseResult parseMaskDims(OpAsmParser &parser, MaskDims &dims) {
  dims = MaskDims::None;
  if (failed(parser.parseOptionalKeyword("depends")))
    return success();
  return parser.parseCommaSeparatedList(
      OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
        SMLoc loc = parser.getCurrentLocation();
        StringRef word;
        if (parser.parseKeyword(&word))
          return failure();
        MaskDims dim = word == "batch"      ? MaskDims::Batch
                       : word == "heads"    ? MaskDims::Heads
                       : word == "kv_heads" ? MaskDims::KvHeads
                                            : MaskDims::None;
        if (dim == MaskDims::None)
          return parser.emitError(loc, "a block mask depends on batch, "
                                       "heads or kv_heads, not '")
                 << word << "'";
        if (bitEnumContainsAny(dims, dim))
          return parser.emitError(loc, "'") << word << "' is listed twice";
        dims = dims | dim;
        return success();
      });
}

ParseResult BlockMaskOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::Argument> args;
  if (parseSymbolAndSignature(parser, result, args,
                              getFunctionTypeAttrName(result.name),
                              getArgAttrsAttrName(result.name),
                              /*resAttrsName=*/StringAttr()))
    return failure();
  Builder &b = parser.getBuilder();
  int64_t blockM, blockN;
  MaskDims dims;
  if (parser.parseKeyword("tiles") || parser.parseInteger(blockM) ||
      parser.parseKeyword("x") || parser.parseInteger(blockN) ||
      parseMaskDims(parser, dims))
    return failure();
  result.addAttribute(getBlockMAttrName(result.name),
                      b.getI64IntegerAttr(blockM));
  result.addAttribute(getBlockNAttrName(result.name),
                      b.getI64IntegerAttr(blockN));
  result.addAttribute(getDependsAttrName(result.name),
                      MaskDimsAttr::get(b.getContext(), dims));
  SmallVector<OpAsmParser::Argument> all;
  SMLoc coordsLoc = parser.getCurrentLocation();
  if (parser.parseKeyword("coords") ||
      parser.parseArgumentList(all, OpAsmParser::Delimiter::Paren,
                               /*allowType=*/false))
    return failure();
  if (all.size() != 4)
    return parser.emitError(coordsLoc, "expected the four coordinates "
                                       "(b, h, q, kv), got ")
           << all.size();
  for (OpAsmParser::Argument &coord : all)
    coord.type = b.getIndexType();
  all.append(args.begin(), args.end());
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  SMLoc bodyLoc = parser.getCurrentLocation();
  if (parser.parseRegion(*body, all))
    return failure();
  if (body->empty())
    return parser.emitError(bodyLoc, "a block mask needs a body that yields "
                                     "the visibility of (b, h, q, kv)");
  BlockMaskOp::ensureTerminator(*body, b, result.location);
  return success();
}

void BlockMaskOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  p << '(';
  ArrayAttr attrs = getArgAttrsAttr();
  llvm::interleaveComma(llvm::enumerate(getMaskArgs()), p, [&](auto it) {
    ArrayRef<NamedAttribute> argAttrs;
    if (attrs)
      if (auto dict = dyn_cast_or_null<DictionaryAttr>(attrs[it.index()]))
        argAttrs = dict.getValue();
    p.printRegionArgument(it.value(), argAttrs);
  });
  p << ") tiles " << getBlockMAttr().getInt() << " x "
    << getBlockNAttr().getInt();
  if (getDepends() != MaskDims::None) {
    SmallVector<StringRef, 3> dims;
    if (dependsOnBatch())
      dims.push_back("batch");
    if (dependsOnHeads())
      dims.push_back("heads");
    if (listsPerKvHead())
      dims.push_back("kv_heads");
    p << " depends [" << llvm::join(dims, ", ") << ']';
  }
  p << " coords(";
  llvm::interleaveComma(getBody().getArguments().take_front(4), p,
                        [&](BlockArgument a) { p.printOperand(a); });
  p << ')';
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(),
      {getSymNameAttrName(), getFunctionTypeAttrName(), getBlockMAttrName(),
       getBlockNAttrName(), getDependsAttrName(), getArgAttrsAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

/// Argument `i`, of type `type`: it names a kernel argument once, and is a
/// scalar or a global array as kernel arguments are.
static LogicalResult verifyMaskArg(BlockMaskOp op, unsigned i, Type type,
                                   llvm::SmallSet<StringRef, 8> &roles) {
  StringRef role = op.getArgRole(i);
  if (role.empty())
    return op.emitOpError() << "argument #" << i
                            << " needs the kernel argument it stands for: "
                               "{cuir.arg = \"...\"}";
  if (role.starts_with("block_mask:"))
    return op.emitOpError() << "argument '" << role
                            << "' is one of the block lists; a block mask "
                               "cannot read the lists it defines";
  if (!roles.insert(role).second)
    return op.emitOpError() << "argument '" << role << "' is declared twice";
  // getArgRole found the attributes.
  auto dict = cast<DictionaryAttr>(op.getArgAttrsAttr()[i]);
  Attribute extent = dict.get(CuIRDialect::ExtentAttrHelper::getNameStr());
  if (auto memref = dyn_cast<MemRefType>(type)) {
    std::optional<MemorySpace> space = getMemorySpace(memref);
    if (!space || *space != MemorySpace::Global)
      return op.emitOpError()
             << "argument '" << role << "' is a memref in " << spaceName(space)
             << " memory; kernel buffers are in "
                "#cuir.mem<global>";
    if (extent && !isa<StringAttr>(extent))
      return op.emitOpError()
             << "argument '" << role
             << "' has a cuir.extent that is not a string: " << extent;
    return success();
  }
  if (!type.isIndex() && !type.isInteger(32) && !type.isInteger(64) &&
      !type.isF32())
    return op.emitOpError() << "argument '" << role
                            << "' must be index, i32, i64, f32 or a memref "
                               "in #cuir.mem<global>, not "
                            << type;
  if (extent)
    return op.emitOpError() << "argument '" << role
                            << "' is a scalar; cuir.extent is only for arrays";
  return success();
}

/// `depends` lists every dimension whose coordinate the region reads.
static LogicalResult verifyDepends(BlockMaskOp op) {
  auto check = [&](unsigned coord, bool listed, StringRef dim) {
    Value arg = op.getCoordArg(coord);
    if (listed || arg.use_empty())
      return success();
    InFlightDiagnostic diag = op.emitOpError()
                              << "reads coordinate #" << coord << " ("
                              << (coord == 0 ? "b" : "h")
                              << ") but `depends` does not list " << dim
                              << "; the lists would be broadcast over it";
    diag.attachNote((*arg.getUsers().begin())->getLoc()) << "read here";
    return failure();
  };
  if (op.dependsOnHeads() && op.listsPerKvHead())
    return op.emitOpError() << "lists `heads` and `kv_heads`: a row of lists "
                               "is per query head or per KV head, not both";
  return failure(
      failed(check(0, op.dependsOnBatch(), "batch")) ||
      failed(check(1, op.dependsOnHeads() || op.listsPerKvHead(), "heads")));
}

LogicalResult BlockMaskOp::verify() {
  // The accessors are unsigned; the attributes may hold any i64.
  int64_t blockM = getBlockMAttr().getInt(), blockN = getBlockNAttr().getInt();
  if (blockM <= 0 || blockN <= 0)
    return emitOpError() << "tile sizes must be positive, got " << blockM
                         << " x " << blockN;
  FunctionType type = getFunctionType();
  if (!type.getResults().empty())
    return emitOpError() << "a block mask returns nothing; its region yields "
                            "the visibility of a pair";
  unsigned n = type.getNumInputs();
  ArrayAttr attrs = getArgAttrsAttr();
  if (attrs && attrs.size() != n)
    return emitOpError() << "has attributes for " << attrs.size()
                         << " argument(s) but " << n << " argument(s)";
  Block &body = getBody().front();
  if (body.getNumArguments() != n + 4)
    return emitOpError() << "region must take the coordinates (b, h, q, kv) "
                            "and the "
                         << n << " argument(s), " << n + 4
                         << " block arguments, got " << body.getNumArguments();
  static constexpr StringLiteral names[] = {"b", "h", "q", "kv"};
  for (unsigned i = 0; i < 4; ++i)
    if (!body.getArgument(i).getType().isIndex())
      return emitOpError() << "coordinate #" << i << " (" << names[i]
                           << ") must be index, got "
                           << body.getArgument(i).getType();
  llvm::SmallSet<StringRef, 8> roles;
  for (unsigned i = 0; i < n; ++i) {
    if (body.getArgument(i + 4).getType() != type.getInput(i))
      return emitOpError() << "region argument #" << i + 4 << " has type "
                           << body.getArgument(i + 4).getType()
                           << " but argument #" << i << " is declared "
                           << type.getInput(i);
    if (failed(verifyMaskArg(*this, i, type.getInput(i), roles)))
      return failure();
  }
  return verifyDepends(*this);
}

//===----------------------------------------------------------------------===//
// The kernel's block mask
//===----------------------------------------------------------------------===//

/// The kernel argument whose role is `role`, or null.
static BlockArgument findArgByRole(KernelOp kernel, StringRef role) {
  for (BlockArgument arg : kernel.getBody().getArguments())
    if (argRole(kernel, arg.getArgNumber()) == role)
      return arg;
  return {};
}

LogicalResult KernelOp::verifySymbolUses(SymbolTableCollection &symbols) {
  StringRef attrName = CuIRDialect::BlockMaskAttrHelper::getNameStr();
  Attribute attr = (*this)->getAttr(attrName);
  if (!attr)
    return success();
  auto ref = dyn_cast<FlatSymbolRefAttr>(attr);
  if (!ref)
    return emitOpError() << attrName
                         << " must name a cuir.block_mask (@sym), not " << attr;
  Operation *target = symbols.lookupNearestSymbolFrom(*this, ref.getAttr());
  auto mask = dyn_cast_or_null<BlockMaskOp>(target);
  if (!mask)
    return emitOpError() << attrName << " names " << ref << ", which is "
                         << (target ? "not a cuir.block_mask"
                                    : "not defined in the module");
  Type list = MemRefType::get(
      {ShapedType::kDynamic}, IntegerType::get(getContext(), 32),
      MemRefLayoutAttrInterface{},
      MemorySpaceAttr::get(getContext(), MemorySpace::Global));
  // The lists a forward kernel walks (a query block's KV tiles), or the
  // transposed ones a backward kernel walks (a KV tile's query tiles).
  bool transposed =
      llvm::any_of(kBlockMaskTransposedListRoles, [&](StringRef r) {
        return static_cast<bool>(findArgByRole(*this, r));
      });
  SmallVector<StringRef, 5> roles;
  if (transposed)
    roles.assign(std::begin(kBlockMaskTransposedListRoles),
                 std::end(kBlockMaskTransposedListRoles));
  else
    roles.assign(std::begin(kBlockMaskListRoles),
                 std::end(kBlockMaskListRoles));
  roles.push_back(kBlockMaskOrderRole);
  for (StringRef role : roles) {
    BlockArgument arg = findArgByRole(*this, role);
    if (!arg && role == kBlockMaskOrderRole)
      continue; // optional: the kernel keeps the grid's order
    if (!arg)
      return emitOpError() << "walks the block mask " << ref
                           << " but has no argument {cuir.arg = \"" << role
                           << "\"} of type " << list;
    if (arg.getType() != list)
      return emitOpError() << "argument '" << role << "' must be " << list
                           << ", got " << arg.getType();
  }
  for (unsigned i = 0, e = mask.getNumMaskArgs(); i < e; ++i) {
    StringRef role = mask.getArgRole(i);
    BlockArgument arg = findArgByRole(*this, role);
    Type want = mask.getFunctionType().getInput(i);
    if (!arg || arg.getType() != want)
      return emitOpError() << "walks the block mask " << ref
                           << ", which reads '" << role << "' (" << want
                           << "), but the kernel has "
                           << (arg ? "it with type " : "no such argument")
                           << (arg ? arg.getType() : Type());
  }
  return success();
}

BlockMaskOp mlir::cuir::getBlockMask(KernelOp kernel) {
  auto ref = kernel->getAttrOfType<FlatSymbolRefAttr>(
      CuIRDialect::BlockMaskAttrHelper::getNameStr());
  if (!ref)
    return {};
  return dyn_cast_or_null<BlockMaskOp>(
      SymbolTable::lookupNearestSymbolFrom(kernel, ref.getAttr()));
}

#define GET_OP_CLASSES
#include "cuir/Dialect/CuIROps.cpp.inc"

//===----------------------------------------------------------------------===//
// LaunchSequenceOp
//===----------------------------------------------------------------------===//

SmallVector<KernelOp> LaunchSequenceOp::getKernelOps() {
  SmallVector<KernelOp> kernels;
  for (Attribute ref : getKernels())
    kernels.push_back(SymbolTable::lookupNearestSymbolFrom<KernelOp>(
        *this, cast<FlatSymbolRefAttr>(ref).getAttr()));
  return kernels;
}

/// The type and attributes that define a shared buffer: a role's argument
/// type and, for a workspace, its shape.
static std::pair<Type, Attribute> sharedBufferKey(KernelOp kernel, unsigned i) {
  return {kernel.getArgumentTypes()[i],
          kernel.getArgAttr(i, CuIRDialect::ShapeAttrHelper::getNameStr())};
}

LogicalResult
LaunchSequenceOp::verifySymbolUses(SymbolTableCollection &symbols) {
  // The first kernel that has a role fixes its buffer for the others.
  llvm::StringMap<std::pair<KernelOp, std::pair<Type, Attribute>>> buffers;
  for (Attribute attr : getKernels()) {
    auto ref = cast<FlatSymbolRefAttr>(attr);
    Operation *target = symbols.lookupNearestSymbolFrom(*this, ref.getAttr());
    auto kernel = dyn_cast_or_null<KernelOp>(target);
    if (!kernel)
      return emitOpError() << "names " << ref << ", which is "
                           << (target ? "not a cuir.kernel"
                                      : "not defined in the module");
    for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i) {
      StringRef role = argRole(kernel, i);
      if (!isa<MemRefType>(kernel.getArgumentTypes()[i]) || role.empty())
        continue;
      auto key = sharedBufferKey(kernel, i);
      auto [it, inserted] = buffers.try_emplace(role, kernel, key);
      if (inserted || it->second.second == key)
        continue;
      InFlightDiagnostic diag = emitOpError()
                                << "shares '" << role << "' between @"
                                << it->second.first.getSymName() << " and @"
                                << kernel.getSymName()
                                << ", which declare it differently (";
      auto print = [&](std::pair<Type, Attribute> k) {
        diag << k.first;
        if (k.second)
          diag << " of shape " << k.second;
      };
      print(it->second.second);
      diag << " vs ";
      print(key);
      return diag << "); kernels of a sequence must agree on a buffer's type"
                  << (role.starts_with(kWorkspaceRolePrefix) ? " and cuir.shape"
                                                             : "");
    }
  }
  for (StringRef role : kBackwardOutputRoles)
    if (!buffers.count(role))
      return emitOpError() << "is a backward pass but no kernel of it writes '"
                           << role << "'";
  return success();
}
