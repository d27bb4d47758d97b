//===- ScoreHelper.cpp - The variant's scores as C++ statements -----------===//
//
// The body of a variant's cuir.elementwise, cleaned up by MLIR (CSE,
// canonicalisation, region DCE) on a copy, printed statement by statement:
// what depends on the element (its score or indices) inside the loops over
// the fragment, the rest once per call ahead of them. Three forms save work
// per element:
//   - a relative position as float (sitofp of q * q_idx + kv * kv_idx + c):
//     its invariant part converted once, the element's offset added;
//   - an invariant times such a position: one product per call, one FMA per
//     element (the invariant held in the KV loop: holdFactor);
//   - x / c with c invariant: one reciprocal per call, a multiply per
//     element (within an ulp);
//   the first three only where the value does not reach a comparison, a
//   rounding or a conversion to an integer, at which an ulp can flip the
//   result (a mask's chunk of q_idx / 41);
//   - log1p(x) of an integer-valued x: log(x + 1), the SFU's __logf, since
//     x + 1 is exact below 2^24 (and off by at most 2^-24 relatively above),
//     which log1pf's cancellation-free path cannot improve on.
//
//===----------------------------------------------------------------------===//

#include "ScoreHelper.h"

#include "cuir/Lower/CppEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/ScopeExit.h"

#include <climits>

using namespace mlir;
using namespace mlir::cuir;

namespace {

/// An integer of the score function as q * q_idx + kv * kv_idx + invariant.
struct IndexAffine {
  int64_t q = 0, kv = 0, cst = 0;
  SmallVector<std::pair<int64_t, Value>> invariant;
};

bool decomposeIndex(Value v, Value qIdx, Value kvIdx,
                    const llvm::DenseSet<Value> &perElement, int64_t sign,
                    IndexAffine &out) {
  if (v == qIdx || v == kvIdx) {
    (v == qIdx ? out.q : out.kv) += sign;
    return true;
  }
  // Positions are sums in C++ int: i64 values and constants beyond int take
  // the general path, which writes (or refuses) them at their width.
  if (!v.getType().isIndex() && !v.getType().isInteger(32))
    return false;
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c))) {
    int64_t x = c.getSExtValue();
    if (x < INT32_MIN || x > INT32_MAX)
      return false;
    out.cst += sign * x;
    return true;
  }
  if (!perElement.contains(v)) {
    out.invariant.push_back({sign, v});
    return true;
  }
  Operation *op = v.getDefiningOp();
  if (!op)
    return false;
  if (isa<arith::AddIOp, arith::SubIOp>(op))
    return decomposeIndex(op->getOperand(0), qIdx, kvIdx, perElement, sign,
                          out) &&
           decomposeIndex(op->getOperand(1), qIdx, kvIdx, perElement,
                          isa<arith::SubIOp>(op) ? -sign : sign, out);
  if (isa<arith::IndexCastOp, arith::ExtSIOp>(op))
    return decomposeIndex(op->getOperand(0), qIdx, kvIdx, perElement, sign,
                          out);
  return false;
}

/// `terms` as a C++ sum ("0" when empty).
std::string cppSum(ArrayRef<std::pair<int64_t, std::string>> terms) {
  std::string s;
  for (auto [coef, e] : terms) {
    if (coef == 0)
      continue;
    bool neg = coef < 0;
    std::string mag = std::llabs(coef) == 1
                          ? e
                          : std::to_string(std::llabs(coef)) + " * " + e;
    s += s.empty() ? (neg ? "-" + mag : mag) : (neg ? " - " : " + ") + mag;
  }
  return s.empty() ? "0" : s;
}

/// x / 2 built at the builder's insertion point, the halving pushed through
/// sums, differences, negations and selects into one factor of each product,
/// preferring a factor that does not depend on the element: the sigmoid
/// weights' tanh(s / 2) then costs no multiply per element. Halving is exact
/// (barring subnormals), so the score is bit for bit the same.
Value buildHalf(OpBuilder &b, Value x,
                const llvm::DenseSet<Value> &perElement) {
  Location loc = x.getLoc();
  auto half = [&](Value v) { return buildHalf(b, v, perElement); };
  Operation *def = x.getDefiningOp();
  APFloat f(0.0f);
  if (matchPattern(x, m_ConstantFloat(&f))) {
    f.divide(APFloat(f.getSemantics(), 2), APFloat::rmNearestTiesToEven);
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(x.getType(), f));
  }
  if (auto add = dyn_cast_or_null<arith::AddFOp>(def))
    return arith::AddFOp::create(b, loc, half(add.getLhs()),
                                 half(add.getRhs()));
  if (auto sub = dyn_cast_or_null<arith::SubFOp>(def))
    return arith::SubFOp::create(b, loc, half(sub.getLhs()),
                                 half(sub.getRhs()));
  if (auto neg = dyn_cast_or_null<arith::NegFOp>(def))
    return arith::NegFOp::create(b, loc, half(neg.getOperand()));
  if (auto sel = dyn_cast_or_null<arith::SelectOp>(def))
    return arith::SelectOp::create(b, loc, sel.getCondition(),
                                   half(sel.getTrueValue()),
                                   half(sel.getFalseValue()));
  if (auto mul = dyn_cast_or_null<arith::MulFOp>(def)) {
    if (!perElement.contains(mul.getRhs()) || perElement.contains(mul.getLhs()))
      return arith::MulFOp::create(b, loc, mul.getLhs(), half(mul.getRhs()));
    return arith::MulFOp::create(b, loc, half(mul.getLhs()), mul.getRhs());
  }
  Value c = arith::ConstantOp::create(b, loc, b.getFloatAttr(x.getType(), 0.5));
  return arith::MulFOp::create(b, loc, x, c);
}

/// The values of an elementwise body that depend on the element: its score
/// and indices, and everything computed from them.
llvm::DenseSet<Value> perElementValues(Block &body) {
  // The tiles' elements, then (b, h, q_idx, kv_idx).
  unsigned n = body.getNumArguments();
  llvm::DenseSet<Value> perElement = {body.getArgument(n - 2),
                                      body.getArgument(n - 1)};
  for (unsigned i = 0; i + 4 < n; ++i)
    perElement.insert(body.getArgument(i));
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return perElement.contains(v); }))
      perElement.insert(op.getResults().begin(), op.getResults().end());
  return perElement;
}

/// Whether float `v` is an integer whenever it is finite: a converted
/// integer, an integral constant, a rounding, or sign changes, sums,
/// products, extrema and selects of such values (a float of magnitude
/// 2^23 or more is an integer, so rounding the result keeps it one).
bool isIntegerValued(Value v, unsigned depth = 0) {
  if (depth > 16)
    return false;
  APFloat f(0.0f);
  if (matchPattern(v, m_ConstantFloat(&f)))
    return f.isInteger();
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<arith::SIToFPOp, arith::UIToFPOp, math::FloorOp, math::CeilOp,
          math::TruncOp, math::RoundOp, math::RoundEvenOp>(def))
    return true;
  auto all = [&](ValueRange vs) {
    return llvm::all_of(vs,
                        [&](Value x) { return isIntegerValued(x, depth + 1); });
  };
  if (isa<math::AbsFOp, arith::NegFOp, arith::AddFOp, arith::SubFOp,
          arith::MulFOp, arith::MaxNumFOp, arith::MinNumFOp, arith::MaximumFOp,
          arith::MinimumFOp>(def))
    return all(def->getOperands());
  if (auto sel = dyn_cast<arith::SelectOp>(def))
    return all({sel.getTrueValue(), sel.getFalseValue()});
  return false;
}

/// log1p(x) -> log(x + 1) for integer-valued x (see the file comment).
struct Log1pOfInteger : OpRewritePattern<math::Log1pOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::Log1pOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getType().isF32() || !isIntegerValued(op.getOperand()))
      return failure();
    Location loc = op.getLoc();
    Value one = arith::ConstantOp::create(rewriter, loc,
                                          rewriter.getF32FloatAttr(1.0f));
    Value sum = arith::AddFOp::create(rewriter, loc, op.getOperand(), one);
    rewriter.replaceOpWithNewOp<math::LogOp>(op, sum);
    return success();
  }
};

/// A floored remainder (torch.remainder, Python's %) compared with zero:
/// select(r != 0 && sign(r) != sign(c), r + c, r) ==/!= 0 with r =
/// remsi(x, c) for a constant c becomes r ==/!= 0. Exact: the select is 0
/// only where r is (|r| < |c|, so r + c is never 0, and the adjustment is
/// off where r is 0). What stays is a truncated remainder by a constant
/// tested against zero, which LLVM turns into a multiply and a compare; a
/// dilated mask's 14 PTX instructions a score become about 7.
struct FlooredRemainderIsZero : OpRewritePattern<arith::CmpIOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::CmpIOp cmp,
                                PatternRewriter &rewriter) const override {
    if ((cmp.getPredicate() != arith::CmpIPredicate::eq &&
         cmp.getPredicate() != arith::CmpIPredicate::ne) ||
        !matchPattern(cmp.getRhs(), m_Zero()))
      return failure();
    auto sel = cmp.getLhs().getDefiningOp<arith::SelectOp>();
    if (!sel)
      return failure();
    Value r = sel.getFalseValue();
    auto rem = r.getDefiningOp<arith::RemSIOp>();
    auto add = sel.getTrueValue().getDefiningOp<arith::AddIOp>();
    APInt c, added;
    if (!rem || !add || !matchPattern(rem.getRhs(), m_ConstantInt(&c)) ||
        c.isZero())
      return failure();
    Value other = add.getLhs() == r ? add.getRhs() : add.getLhs();
    if ((add.getLhs() != r && add.getRhs() != r) ||
        !matchPattern(other, m_ConstantInt(&added)) || added != c)
      return failure();
    // The adjustment must be off where r is 0: its condition is r != 0, or
    // a conjunction with it.
    auto isNonZero = [&](Value v) {
      auto ne = v.getDefiningOp<arith::CmpIOp>();
      return ne && ne.getPredicate() == arith::CmpIPredicate::ne &&
             ne.getLhs() == r && matchPattern(ne.getRhs(), m_Zero());
    };
    Value cond = sel.getCondition();
    auto conj = cond.getDefiningOp<arith::AndIOp>();
    if (!isNonZero(cond) &&
        !(conj && (isNonZero(conj.getLhs()) || isNonZero(conj.getRhs()))))
      return failure();
    rewriter.replaceOpWithNewOp<arith::CmpIOp>(cmp, cmp.getPredicate(), r,
                                               cmp.getRhs());
    return success();
  }
};

/// MLIR's clean-up of the body of a copy (an op with one region): CSE, arith
/// canonicalisation (folded constants stay inside the body), region DCE; and
/// log1p of an integer as a log, a floored remainder tested against zero as
/// a truncated one.
void cleanUp(Operation *work) {
  MLIRContext *ctx = work->getContext();
  Region &body = work->getRegion(0);
  IRRewriter rewriter(ctx);
  DominanceInfo dom(work);
  eliminateCommonSubExpressions(rewriter, dom, work);
  RewritePatternSet patterns(ctx);
  for (RegisteredOperationName name : ctx->getRegisteredOperations())
    if (name.getDialectNamespace() == "arith")
      name.getCanonicalizationPatterns(patterns, ctx);
  patterns.add<Log1pOfInteger, FlooredRemainderIsZero>(ctx);
  GreedyRewriteConfig config;
  config.setScope(&body);
  config.enableConstantCSE(false);
  (void)applyPatternsGreedily(body, std::move(patterns), config);
  (void)runRegionDCE(rewriter, work->getRegions());
}

/// The clamps min(q_idx, bound) and min(kv_idx, bound) of a score body,
/// with a bound that is the same for every element (a captured tensor's
/// index kept within its extent): each with whether it clamps the query.
SmallVector<std::pair<arith::MinSIOp, bool>> indexClamps(Block &body) {
  unsigned n = body.getNumArguments();
  Value qIdx = body.getArgument(n - 2), kvIdx = body.getArgument(n - 1);
  llvm::DenseSet<Value> perElement = perElementValues(body);
  SmallVector<std::pair<arith::MinSIOp, bool>> clamps;
  body.walk([&](arith::MinSIOp min) {
    for (auto [idx, bound] : {std::pair(min.getLhs(), min.getRhs()),
                              std::pair(min.getRhs(), min.getLhs())})
      if ((idx == qIdx || idx == kvIdx) && !perElement.contains(bound)) {
        clamps.push_back({min, idx == qIdx});
        return;
      }
  });
  return clamps;
}

/// Whether `v` is computed from block argument `arg` of its body.
bool readsArg(Value v, Value arg, unsigned depth = 0) {
  if (v == arg)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 32)
    return false;
  return llvm::any_of(def->getOperands(),
                      [&](Value o) { return readsArg(o, arg, depth + 1); });
}

/// Whether the body loads a captured tensor once per score: at indices that
/// read both q_idx and kv_idx. (A load per row or per key is amortised over
/// the fragment already; for those, clamp-free loops would cost registers
/// for nothing.)
bool gathersPerScore(Block &body) {
  unsigned n = body.getNumArguments();
  Value qIdx = body.getArgument(n - 2), kvIdx = body.getArgument(n - 1);
  bool found = false;
  body.walk([&](memref::LoadOp load) {
    auto reads = [&](Value arg) {
      return llvm::any_of(load.getIndices(),
                          [&](Value i) { return readsArg(i, arg); });
    };
    found |= reads(qIdx) && reads(kvIdx);
  });
  return found;
}

/// The captured tensors a score body loads at (..., kv_idx): a thread's two
/// adjacent keys are adjacent elements there.
SmallVector<Value> keyContiguousTensors(Block &body) {
  Value kvIdx = body.getArgument(body.getNumArguments() - 1);
  SmallVector<Value> tensors;
  body.walk([&](memref::LoadOp load) {
    if (!load.getIndices().empty() && load.getIndices().back() == kvIdx &&
        !llvm::is_contained(tensors, load.getMemRef()))
      tensors.push_back(load.getMemRef());
  });
  return tensors;
}

/// Bytes of a captured tensor's element (a bool is one).
unsigned elementBytes(Type t) {
  return t.isInteger(1) ? 1 : t.getIntOrFloatBitWidth() / 8;
}

/// The loads of an in-range score body that an early score hook gathers:
/// of a captured tensor, once per score at (..., kv_idx) in a row of even
/// length (so a pair of adjacent keys from an even key is one aligned
/// word), and at most two bytes a score in all: the words stay in
/// registers across the step's wait and GEMM (32 at 64 scores a thread).
/// All of the body's loads per score, or none: the words and the loads
/// left to the scores together spill (72 bytes for a bool mask and an f16
/// bias, against 12 with neither gathered).
SmallVector<memref::LoadOp> gatherableLoads(Block &body) {
  unsigned n = body.getNumArguments();
  Value qIdx = body.getArgument(n - 2), kvIdx = body.getArgument(n - 1);
  SmallVector<memref::LoadOp> loads;
  unsigned bytes = 0;
  for (auto load : body.getOps<memref::LoadOp>()) {
    auto reads = [&](Value arg) {
      return llvm::any_of(load.getIndices(),
                          [&](Value i) { return readsArg(i, arg); });
    };
    if (!reads(qIdx) || !reads(kvIdx))
      continue;
    MemRefType type = load.getMemRefType();
    unsigned b = type.getElementType().isIntOrFloat()
                     ? elementBytes(type.getElementType())
                     : 0;
    bytes += b;
    if (type.getRank() < 2 || !type.hasStaticShape() ||
        !type.getLayout().isIdentity() || type.getShape().back() % 2 != 0 ||
        load.getIndices().back() != kvIdx || b == 0 || bytes > 2)
      return {};
    loads.push_back(load);
  }
  return loads;
}

/// One statement of the helper, rendered once the statements it reads are
/// named.
struct Decl {
  std::string type;
  char prefix;
  bool perElement;
  /// Values of the body the statement reads, and statements it names.
  SmallVector<Value> reads;
  SmallVector<size_t> uses;
  std::function<FailureOr<std::string>()> render;
  std::string name;
  /// The value the statement declares (none for a per-call base).
  Value value;
};

/// Prints a cleaned-up body.
class BodyPrinter {
public:
  /// The body of a score helper, (s, b, h, q_idx, kv_idx), or of a
  /// scatter_add, (ds[, s], b, h, q_idx, kv_idx).
  explicit BodyPrinter(Block &body)
      : body(body), perElement(perElementValues(body)), scoreForms(true) {
    unsigned n = body.getNumArguments();
    em.names[body.getArgument(0)] = "s";
    if (n == 6)
      em.names[body.getArgument(1)] = "s";
    const char *coords[] = {"b", "h", "q_idx", "kv_idx"};
    for (unsigned i = 0; i < 4; ++i)
      em.names[body.getArgument(n - 4 + i)] = coords[i];
  }
  /// The body of a function of its arguments, named `names`: every statement
  /// in order, none of the score helper's forms.
  BodyPrinter(Block &body, ArrayRef<std::string> names)
      : body(body), scoreForms(false) {
    for (auto [arg, name] : llvm::zip_equal(body.getArguments(), names))
      em.names[arg] = name;
    for (Operation &op : body)
      perElement.insert(op.getResults().begin(), op.getResults().end());
    em.sourceNames = false;
  }

  /// The C++ of `v`, a value from outside the body.
  FailureOr<std::string> outerExpr(Value v) { return expr(v); }
  /// Reads tensor `memref` through the local pointer `alias`.
  void readThrough(Value memref, std::string alias) {
    em.names[memref] = std::move(alias);
  }
  /// Writes the value of `load` as `e` (a gathered word's element): no
  /// statement computes its address.
  void readGathered(Value load, std::string e) {
    gathered[load] = std::move(e);
  }
  FailureOr<GatherBody>
  printGather(ArrayRef<memref::LoadOp> loads, StringRef hoistIndent,
              StringRef elementIndent,
              ArrayRef<std::pair<bool, Value>> clampBounds);
  FailureOr<ScoreBody> print(StringRef hoistIndent, StringRef elementIndent,
                             ArrayRef<std::pair<bool, Value>> clampBounds = {});
  FailureOr<FunctionBody> printFunction(StringRef indent, StringRef what);
  FailureOr<ScatterBody> printScatter(StringRef hoistIndent,
                                      StringRef elementIndent);

private:
  LogicalResult declare(Operation &op);
  bool declareSpecial(Operation &op, const std::string &type);
  void holdFactor(Value a);
  std::optional<std::pair<Value, Value>> scaledPosition(arith::MulFOp mul);
  FailureOr<std::string> expr(Value v);
  void markLive(Value v);
  void markLive(size_t decl);
  size_t add(Decl d) {
    decls.push_back(std::move(d));
    return decls.size() - 1;
  }

  /// Renders the live statements; the per-element ones at `elementIndent`.
  /// Those marked in `unmasked` also go to the body's unmasked statements.
  LogicalResult render(StringRef hoistIndent, StringRef elementIndent,
                       ScoreBody &out,
                       const std::vector<bool> *unmasked = nullptr);

  Block &body;
  llvm::DenseSet<Value> perElement;
  /// The score helper's forms that save work per element (declareSpecial).
  bool scoreForms;
  /// What the body computes, for diagnostics.
  std::string what = "the variant's scores";
  CppEmitter em;
  std::string why;
  std::vector<Decl> decls;
  /// The statement that declares each value.
  llvm::DenseMap<Value, size_t> declOf;
  /// Casts C++ does not need, of values the body names: CppEmitter writes
  /// them as their operand.
  llvm::DenseSet<Value> unneededCasts;
  /// Loads whose values are gathered words' elements (readGathered).
  llvm::DenseMap<Value, std::string> gathered;
  /// Relative positions as floats: value -> (its base statement, offset).
  llvm::DenseMap<Value, std::pair<size_t, std::string>> positions;
  std::vector<bool> live;
  /// Per-call statements kept in the KV loop (holdFactor).
  llvm::DenseSet<size_t> held;
};

FailureOr<std::string> BodyPrinter::expr(Value v) {
  FailureOr<std::string> e = em.expr(v, why);
  if (failed(e))
    return emitError(v.getLoc()) << "cannot write " << what << " in C++: " << why;
  return e;
}

void BodyPrinter::markLive(size_t d) {
  if (live[d])
    return;
  live[d] = true;
  for (Value r : decls[d].reads)
    markLive(r);
  for (size_t u : decls[d].uses)
    markLive(u);
}

/// Marks the statements `v`'s expression reads.
void BodyPrinter::markLive(Value v) {
  if (auto it = declOf.find(v); it != declOf.end())
    return markLive(it->second);
  if (Operation *def = v.getDefiningOp(); def && def->getBlock() == &body)
    for (Value o : def->getOperands())
      markLive(o);
}

std::optional<std::pair<Value, Value>>
BodyPrinter::scaledPosition(arith::MulFOp mul) {
  for (auto [a, p] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())})
    if (!perElement.contains(a) && positions.count(p))
      return std::pair(a, p);
  return std::nullopt;
}

/// Whether `v` reaches, through float arithmetic, an op whose result jumps
/// somewhere (a comparison, a rounding, a conversion to an integer): there an
/// ulp can change the result, so `v` is computed exactly as written.
static bool reachesDiscontinuity(Value v) {
  SmallVector<Value> work = {v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    for (Operation *user : x.getUsers()) {
      if (isa<arith::CmpFOp, arith::FPToSIOp, arith::FPToUIOp, arith::RemFOp,
              math::FloorOp, math::CeilOp, math::RoundOp, math::RoundEvenOp,
              math::TruncOp>(user))
        return true;
      for (Value r : user->getResults())
        if (isa<FloatType>(r.getType()))
          work.push_back(r);
    }
  }
  return false;
}

/// Holds per-call factor `a` of a scaled position in the KV loop. The score
/// helper runs once per KV tile, so `a` is invariant in the kernel's KV loop,
/// and LLVM hoists its products with the fragment's constant offsets (a slope
/// times -q_off + kv_off, one per score) out of the loop: dozens of registers
/// live across it, and spills (docs/benchmarks/spills.md). An empty asm
/// volatile, which cannot leave the loop, keeps them there; a constant stays
/// one, for LLVM to fold.
void BodyPrinter::holdFactor(Value a) {
  if (matchPattern(a, m_Constant()) || !isa<Float32Type>(a.getType()))
    return;
  if (auto it = declOf.find(a); it != declOf.end()) {
    held.insert(it->second);
    return;
  }
  // A value from outside the body (a parameter): declared to be held.
  size_t d = add({"float", 'v', false, {}, {},
                  [this, a]() { return expr(a); }, "", a});
  declOf[a] = d;
  held.insert(d);
}

/// The three forms that save work per element (see the file comment);
/// false if `op` is none of them. They round differently from the ops as
/// written (within an ulp), so a value that reaches a discontinuity is
/// never given one.
bool BodyPrinter::declareSpecial(Operation &op, const std::string &type) {
  Value result = op.getResult(0);
  if (!perElement.contains(result) || reachesDiscontinuity(result))
    return false;
  IndexAffine pos;
  if (isa<arith::SIToFPOp>(op) &&
      decomposeIndex(op.getOperand(0), body.getArgument(3),
                     body.getArgument(4), perElement, 1, pos)) {
    SmallVector<Value> invariant;
    for (auto [coef, x] : pos.invariant)
      invariant.push_back(x);
    size_t base = add({"float", 'f', false, invariant, {}, [this, pos]() ->
                       FailureOr<std::string> {
                         SmallVector<std::pair<int64_t, std::string>> inv = {
                             {pos.q, "row0"}, {pos.kv, "col0"}};
                         for (auto [coef, x] : pos.invariant) {
                           FailureOr<std::string> xe = expr(x);
                           if (failed(xe))
                             return failure();
                           inv.push_back({coef, *xe});
                         }
                         if (pos.cst)
                           inv.push_back({pos.cst, "1"});
                         return "static_cast<float>(" + cppSum(inv) + ")";
                       }, "", Value()});
    std::string offset = "static_cast<float>(" +
                         cppSum({{pos.q, "q_off"}, {pos.kv, "kv_off"}}) + ")";
    positions[result] = {base, offset};
    declOf[result] = add({type, 'v', true, {}, {base}, [this, base, offset] {
                            return FailureOr<std::string>(
                                "(" + decls[base].name + " + " + offset + ")");
                          }, "", result});
    return true;
  }
  if (auto mul = dyn_cast<arith::MulFOp>(op)) {
    std::optional<std::pair<Value, Value>> scaled = scaledPosition(mul);
    if (!scaled)
      return false;
    Value a = scaled->first;
    holdFactor(a);
    size_t base = positions[scaled->second].first;
    std::string offset = positions[scaled->second].second;
    size_t g = add({"float", 'g', false, {a}, {base}, [this, a, base]()
                    -> FailureOr<std::string> {
                      FailureOr<std::string> ae = expr(a);
                      if (failed(ae))
                        return failure();
                      return *ae + " * " + decls[base].name;
                    }, "", Value()});
    declOf[result] = add({type, 'v', true, {a}, {g}, [this, a, g, offset]()
                          -> FailureOr<std::string> {
                            FailureOr<std::string> ae = expr(a);
                            if (failed(ae))
                              return failure();
                            return "(" + decls[g].name + " + " + *ae + " * " +
                                   offset + ")";
                          }, "", result});
    return true;
  }
  auto div = dyn_cast<arith::DivFOp>(op);
  if (!div || perElement.contains(div.getRhs()))
    return false;
  Value num = div.getLhs(), den = div.getRhs();
  size_t r = add({"float", 'r', false, {den}, {}, [this, den]()
                  -> FailureOr<std::string> {
                    FailureOr<std::string> d = expr(den);
                    if (failed(d))
                      return failure();
                    return "1.f / " + *d;
                  }, "", Value()});
  declOf[result] = add({type, 'v', true, {num}, {r}, [this, num, r]()
                        -> FailureOr<std::string> {
                          FailureOr<std::string> n = expr(num);
                          if (failed(n))
                            return failure();
                          return "(" + *n + " * " + decls[r].name + ")";
                        }, "", result});
  return true;
}

LogicalResult BodyPrinter::declare(Operation &op) {
  Value result = op.getResult(0);
  FailureOr<std::string> ty = em.typeOf(result);
  if (failed(ty))
    return emitError(op.getLoc()) << "cannot write " << what
                                  << " in C++: a value of type "
                                  << result.getType();
  // A cast C++ does not need of a value the body names: the value is
  // written as its operand (a value from outside is read once, ahead).
  Value from = op.getNumOperands() == 1 ? op.getOperand(0) : Value();
  FailureOr<std::string> fromTy =
      from ? em.typeOf(from) : FailureOr<std::string>();
  bool named = from && ((isa<BlockArgument>(from) &&
                         from.getParentBlock() == &body) ||
                        declOf.count(from) || unneededCasts.count(from));
  if (em.isNoOpCast(&op) && named && succeeded(fromTy) && *fromTy == *ty) {
    unneededCasts.insert(result);
    return success();
  }
  if (auto it = gathered.find(result); it != gathered.end()) {
    declOf[result] =
        add({*ty,
             'v',
             true,
             {},
             {},
             [e = it->second]() { return FailureOr<std::string>(e); },
             "",
             result});
    return success();
  }
  if (scoreForms && declareSpecial(op, *ty))
    return success();
  // A comparison written with a term moved across reads the moved terms,
  // not the 64-bit sum or difference (CppEmitter::narrowedCompare).
  SmallVector<Value> reads(op.getOperands());
  if (auto cmp = dyn_cast<arith::CmpIOp>(op))
    if (std::optional<CppEmitter::NarrowedCompare> n = em.narrowedCompare(cmp))
      reads = {n->lhs0, n->lhs1, n->rhs};
  declOf[result] = add({*ty, 'v', perElement.contains(result), reads, {},
                        [this, result]() { return expr(result); }, "",
                        result});
  return success();
}

FailureOr<ScoreBody>
BodyPrinter::print(StringRef hoistIndent, StringRef elementIndent,
                   ArrayRef<std::pair<bool, Value>> clampBounds) {
  ValueRange results = body.getTerminator()->getOperands();
  ScoreBody out;
  // The mask: the score's select(visible, s, -inf), or select(hidden, -inf,
  // s) as canonicalization writes an inverted compare. It and every other
  // result's select on the same condition (the derivative's 0 where the
  // score is hidden) are skipped on the tiles the split proved full (MASK
  // false).
  Value visible;
  auto isNegInf = [](Value v) {
    APFloat f(0.0f);
    return matchPattern(v, m_ConstantFloat(&f)) && f.isInfinity() &&
           f.isNegative();
  };
  if (auto sel = results[0].getDefiningOp<arith::SelectOp>())
    if (isNegInf(sel.getFalseValue()) || isNegInf(sel.getTrueValue()))
      visible = sel.getCondition();
  // Per result: the value when visible, and the fill where hidden (which
  // select operand), if it is masked.
  struct Masked {
    Value value, fill;
    bool inverted = false;
  };
  SmallVector<Masked> parts;
  llvm::SmallPtrSet<Operation *, 2> maskSelects;
  for (Value r : results) {
    Masked m{r, Value()};
    auto sel = r.getDefiningOp<arith::SelectOp>();
    if (visible && sel && sel.getCondition() == visible) {
      bool inverted = matchPattern(sel.getTrueValue(), m_Constant()) &&
                      !matchPattern(sel.getFalseValue(), m_Constant());
      m = {inverted ? sel.getFalseValue() : sel.getTrueValue(),
           inverted ? sel.getTrueValue() : sel.getFalseValue(), inverted};
      if (matchPattern(m.fill, m_Constant()))
        maskSelects.insert(sel);
      else
        m = {r, Value()};
    }
    parts.push_back(m);
  }
  for (Operation &op : body.without_terminator())
    if (op.getNumResults() == 1 && !maskSelects.contains(&op) &&
        !isa<arith::ConstantOp>(op) && failed(declare(op)))
      return failure();
  live.assign(decls.size(), false);
  for (const Masked &m : parts)
    markLive(m.value);
  std::vector<bool> unmasked = live;
  if (visible)
    markLive(visible);
  for (auto [isQuery, bound] : clampBounds)
    markLive(bound);
  if (failed(render(hoistIndent, elementIndent, out, &unmasked)))
    return failure();
  for (auto [isQuery, bound] : clampBounds) {
    FailureOr<std::string> e = expr(bound);
    if (failed(e))
      return failure();
    out.clampBounds.push_back({isQuery, *e});
  }
  FailureOr<std::string> visE =
      visible ? expr(visible) : FailureOr<std::string>(std::string());
  if (failed(visE))
    return failure();
  out.masked = !maskSelects.empty();
  for (const Masked &m : parts) {
    FailureOr<std::string> v = expr(m.value);
    FailureOr<std::string> fill =
        m.fill ? expr(m.fill) : FailureOr<std::string>(std::string());
    if (failed(v) || failed(fill))
      return failure();
    std::string hidden = m.inverted ? *visE : "!" + *visE;
    out.maskedAssigns.push_back(
        {*v, m.fill ? hidden : std::string(), m.fill ? *fill : std::string()});
    out.bitsMaskedAssigns.push_back(
        {*v, m.fill ? "!mask_bits->visible(q_off, kv_off)" : std::string(),
         m.fill ? *fill : std::string()});
  }
  return out;
}

LogicalResult BodyPrinter::render(StringRef hoistIndent,
                                  StringRef elementIndent, ScoreBody &out,
                                  const std::vector<bool> *unmasked) {
  // Statements numbered in order, each rendered once those it reads are.
  int n = 0;
  for (size_t i = 0; i < decls.size(); ++i) {
    if (!live[i])
      continue;
    FailureOr<std::string> rhs = decls[i].render();
    if (failed(rhs))
      return failure();
    decls[i].name = decls[i].prefix + std::to_string(++n);
    std::string decl = decls[i].type + " " + decls[i].name + " = " + *rhs;
    std::string line =
        held.contains(i)
            ? hoistIndent.str() + decl + ";\n" + hoistIndent.str() +
                  "asm volatile(\"\" : \"+f\"(" + decls[i].name +
                  ")); // held in the KV loop\n"
            : (decls[i].perElement ? elementIndent : hoistIndent).str() +
                  "const " + decl + ";\n";
    (decls[i].perElement ? out.stmts : out.hoisted) += line;
    if (unmasked && (*unmasked)[i])
      (decls[i].perElement ? out.unmaskedStmts : out.unmaskedHoisted) += line;
    if (decls[i].value)
      em.names[decls[i].value] = decls[i].name;
  }
  return success();
}

FailureOr<GatherBody>
BodyPrinter::printGather(ArrayRef<memref::LoadOp> loads, StringRef hoistIndent,
                         StringRef elementIndent,
                         ArrayRef<std::pair<bool, Value>> clampBounds) {
  what = "the addresses of the variant's gathered loads";
  for (Operation &op : body.without_terminator())
    if (op.getNumResults() == 1 && !isa<arith::ConstantOp>(op) &&
        failed(declare(op)))
      return failure();
  live.assign(decls.size(), false);
  for (memref::LoadOp load : loads)
    for (Value i : load.getIndices())
      markLive(i);
  for (auto [isQuery, bound] : clampBounds)
    markLive(bound);
  ScoreBody stmts;
  if (failed(render(hoistIndent, elementIndent, stmts)))
    return failure();
  GatherBody out;
  out.hoisted = stmts.hoisted;
  out.stmts = stmts.stmts;
  for (auto [isQuery, bound] : clampBounds) {
    FailureOr<std::string> e = expr(bound);
    if (failed(e))
      return failure();
    out.clampBounds.push_back({isQuery, *e});
  }
  for (memref::LoadOp load : loads) {
    FailureOr<std::string> address = em.address(load, why);
    if (failed(address))
      return emitError(load.getLoc())
             << "cannot write " << what << " in C++: " << why;
    MemRefType type = load.getMemRefType();
    unsigned bytes = elementBytes(type.getElementType());
    out.words.push_back({"w" + std::to_string(out.words.size()), *address,
                         bytes, type.getShape().back(), ""});
  }
  return out;
}

FailureOr<FunctionBody> BodyPrinter::printFunction(StringRef indent,
                                                   StringRef what) {
  this->what = what.str();
  Value result = body.getTerminator()->getOperand(0);
  for (Operation &op : body.without_terminator())
    if (op.getNumResults() == 1 && !isa<arith::ConstantOp>(op) &&
        failed(declare(op)))
      return failure();
  live.assign(decls.size(), false);
  markLive(result);
  ScoreBody stmts;
  if (failed(render(indent, indent, stmts)))
    return failure();
  FailureOr<std::string> e = expr(result);
  if (failed(e))
    return failure();
  return FunctionBody{stmts.stmts, *e};
}

FailureOr<ScatterBody> BodyPrinter::printScatter(StringRef hoistIndent,
                                                 StringRef elementIndent) {
  what = "the variant's parameter gradient";
  em.names[body.getArgument(0)] = "ds";
  Operation *yield = body.getTerminator();
  for (Operation &op : body.without_terminator())
    if (op.getNumResults() == 1 && !isa<arith::ConstantOp>(op) &&
        failed(declare(op)))
      return failure();
  live.assign(decls.size(), false);
  for (Value v : yield->getOperands())
    markLive(v);
  ScoreBody stmts;
  if (failed(render(hoistIndent, elementIndent, stmts)))
    return failure();
  ScatterBody out{stmts.hoisted, stmts.stmts, {}, "", false};
  for (Value v : yield->getOperands().drop_back()) {
    FailureOr<std::string> e = expr(v);
    if (failed(e))
      return failure();
    out.indices.push_back(*e);
    out.perElementIndex |= perElement.contains(v);
  }
  FailureOr<std::string> value = expr(yield->getOperands().back());
  if (failed(value))
    return failure();
  out.value = *value;
  return out;
}

} // namespace

FailureOr<ScatterBody> mlir::cuir::printScatterBody(ScatterAddOp op,
                                                    StringRef hoistIndent,
                                                    StringRef elementIndent) {
  OpBuilder builder(op);
  auto work = cast<ScatterAddOp>(builder.clone(*op));
  llvm::scope_exit erase([&] { work.erase(); });
  cleanUp(work);
  return BodyPrinter(work.getBody().front())
      .printScatter(hoistIndent, elementIndent);
}

FailureOr<FunctionBody>
mlir::cuir::printFunctionBody(Operation *op, ArrayRef<std::string> argNames,
                              StringRef indent, StringRef what,
                              function_ref<void(Block &)> simplify) {
  OpBuilder builder(op);
  Operation *work = builder.clone(*op);
  llvm::scope_exit erase([&] { work->erase(); });
  if (simplify)
    simplify(work->getRegion(0).front());
  cleanUp(work);
  return BodyPrinter(work->getRegion(0).front(), argNames)
      .printFunction(indent, what);
}

/// The gathered form of the in-range body `copy` (its clamps replaced by
/// their indices, with `bounds`), if it has loads to gather; null if not.
static FailureOr<std::shared_ptr<GatherBody>>
printGathered(Block &copy, ArrayRef<std::pair<bool, Value>> bounds,
              StringRef hoistIndent, StringRef elementIndent,
              StringRef pairIndex, StringRef keyInPair) {
  SmallVector<memref::LoadOp> loads = gatherableLoads(copy);
  if (loads.empty())
    return std::shared_ptr<GatherBody>();
  BodyPrinter gather(copy), apply(copy);
  // Every tensor read at the key is read through a pair-aligned alias; the
  // scores still read those with loads that are not gathered.
  llvm::DenseSet<Operation *> isGathered;
  for (memref::LoadOp load : loads)
    isGathered.insert(load);
  SmallVector<std::pair<std::string, std::string>> pairReads, stillRead;
  llvm::DenseMap<Value, std::string> tensorExpr;
  for (Value tensor : keyContiguousTensors(copy)) {
    FailureOr<std::string> e = gather.outerExpr(tensor);
    if (failed(e))
      return failure();
    tensorExpr[tensor] = *e;
    std::string alias = "cuir_pairs_" + std::to_string(pairReads.size());
    gather.readThrough(tensor, alias);
    apply.readThrough(tensor, alias);
    pairReads.push_back({alias, *e});
    if (llvm::any_of(tensor.getUsers(), [&](Operation *u) {
          return isa<memref::LoadOp>(u) && u->getBlock() == &copy &&
                 !isGathered.contains(u);
        }))
      stillRead.push_back(pairReads.back());
  }
  for (auto [i, load] : llvm::enumerate(loads)) {
    const std::string &tensor = tensorExpr[load.getMemRef()];
    std::string e = "cuir_pair_elem(" + tensor + ", g.w" + std::to_string(i) +
                    pairIndex.str() + ", " + keyInPair.str() + ")";
    Type et = load.getMemRefType().getElementType();
    if (et.isF16() || et.isBF16())
      e = (et.isF16() ? "cuir_f16_bits_to_float("
                      : "cuir_bf16_bits_to_float(") +
          e + ")";
    apply.readGathered(load.getResult(), e);
  }
  FailureOr<GatherBody> out =
      gather.printGather(loads, hoistIndent, elementIndent, bounds);
  // Indented as the scores helper nests them: in an if.
  FailureOr<ScoreBody> applied =
      apply.print((hoistIndent + "  ").str(), (elementIndent + "  ").str());
  if (failed(out) || failed(applied))
    return failure();
  for (auto [word, load] : llvm::zip_equal(out->words, loads))
    word.tensor = tensorExpr[load.getMemRef()];
  out->pairReads.assign(pairReads.begin(), pairReads.end());
  applied->pairReads.assign(stillRead.begin(), stillRead.end());
  out->apply = std::make_shared<ScoreBody>(std::move(*applied));
  return std::make_shared<GatherBody>(std::move(*out));
}

FailureOr<ScoreBody> mlir::cuir::printScoreBody(ElementwiseOp ew, bool halve,
                                                StringRef hoistIndent,
                                                StringRef elementIndent,
                                                StringRef pairIndex,
                                                StringRef keyInPair) {
  OpBuilder builder(ew);
  auto work = cast<ElementwiseOp>(builder.clone(*ew));
  llvm::scope_exit erase([&] { work.erase(); });
  Block &copy = work.getBody().front();
  if (halve) {
    Operation *yield = copy.getTerminator();
    builder.setInsertionPoint(yield);
    yield->setOperand(
        0, buildHalf(builder, yield->getOperand(0), perElementValues(copy)));
  }
  cleanUp(work);
  FailureOr<ScoreBody> out =
      BodyPrinter(copy).print(hoistIndent, elementIndent);
  SmallVector<std::pair<arith::MinSIOp, bool>> clamps = indexClamps(copy);
  if (failed(out) || clamps.empty() || !gathersPerScore(copy))
    return out;
  // Where every element is within the bounds, each clamp is its index:
  // a per-score gather's addresses become one base plus constant offsets.
  SmallVector<std::pair<bool, Value>> bounds;
  for (auto [min, isQuery] : clamps) {
    unsigned n = copy.getNumArguments();
    Value idx = copy.getArgument(isQuery ? n - 2 : n - 1);
    bounds.push_back(
        {isQuery, min.getLhs() == idx ? min.getRhs() : min.getLhs()});
    min.replaceAllUsesWith(idx);
    min.erase();
  }
  BodyPrinter printer(copy);
  SmallVector<std::pair<std::string, std::string>> pairReads;
  for (Value tensor : keyContiguousTensors(copy)) {
    FailureOr<std::string> e = printer.outerExpr(tensor);
    if (failed(e))
      return failure();
    std::string alias = "cuir_pairs_" + std::to_string(pairReads.size());
    printer.readThrough(tensor, alias);
    pairReads.push_back({alias, *e});
  }
  // Indented as the helper nests them: in a block, then in an if.
  FailureOr<ScoreBody> inRange = printer.print(
      (hoistIndent + "  ").str(), (elementIndent + "    ").str(), bounds);
  if (failed(inRange))
    return failure();
  inRange->pairReads.assign(pairReads.begin(), pairReads.end());
  out->inRange = std::make_shared<ScoreBody>(std::move(*inRange));
  if (pairIndex.empty())
    return out;
  FailureOr<std::shared_ptr<GatherBody>> gathered = printGathered(
      copy, bounds, hoistIndent, elementIndent, pairIndex, keyInPair);
  if (failed(gathered))
    return failure();
  out->gathered = *gathered;
  return out;
}
