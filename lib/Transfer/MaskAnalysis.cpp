//===- MaskAnalysis.cpp - Mask predicates as Presburger sets --------------===//
//
// The predicate is translated bottom-up: an i1 value into the Presburger set
// of the points (q, kv, symbols) where it is true, an integer value into
// pieces, each a linear form valid on a condition set (select, min, max and
// abs give several). Symbols are the values independent of q and kv that
// are not sums of such values, seen through casts that keep the value.
// Integer arithmetic of a fixed width is read as integer arithmetic only
// where it cannot wrap: coordinates and index sizes are below 2^30, values
// of type iN within iN (index: 64 bits, the interpreter's width), other
// values within the range MLIR's integer range inference gives them, and
// every result must stay within its type.
//
//===----------------------------------------------------------------------===//

#include "cuir/Transfer/MaskAnalysis.h"

#include "cuir/Support/IntRanges.h"

#include "mlir/Analysis/Presburger/IntegerRelation.h"
#include "mlir/Analysis/Presburger/PresburgerRelation.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <map>
#include <numeric>

using namespace mlir;
using namespace mlir::cuir;
using presburger::IntegerPolyhedron;
using presburger::IntegerRelation;
using presburger::PresburgerSet;
using presburger::PresburgerSpace;
using presburger::VarKind;
using P = arith::CmpIPredicate;

namespace {

/// Index block arguments (coordinates, sizes) are in [0, 2^30)
/// (cuir/Support/IntRanges.h).
constexpr int64_t kSizeLimit = kIndexLimit;
/// Coefficients read from the sets are below 2^62 in magnitude, so that
/// negating them and adding 1 stays in int64.
constexpr int64_t kCoefLimit = int64_t(1) << 62;
/// A set or value of more pieces is left to the runtime block mask.
constexpr unsigned kMaxPieces = 64;

using Int = __int128;

/// A closed range of integers; a missing side is unbounded.
struct Range {
  std::optional<Int> lo, hi;
};

Range bitRange(unsigned width) {
  if (width == 0 || width > 64)
    return {};
  Int half = Int(1) << (width - 1);
  return {-half, half - 1};
}

/// The width a value of type `t` computes at: index is 64 bits, as the
/// interpreter computes it (a sum beyond that wraps there).
unsigned widthOf(Type t) {
  return t.isIndex() ? 64 : t.getIntOrFloatBitWidth();
}

/// Whether every value of `r` is a value of type `t`.
bool fits(const Range &r, Type t) {
  Range b = bitRange(widthOf(t));
  return r.lo && r.hi && b.lo && *r.lo >= *b.lo && *r.hi <= *b.hi;
}

/// c[0] * q + c[1] * kv + sum(c[2 + i] * symbol_i) + constant; missing
/// coefficients are 0.
struct Lin {
  SmallVector<int64_t, 4> c;
  int64_t constant = 0;
  int64_t at(unsigned i) const { return i < c.size() ? c[i] : 0; }
};

Lin constantLin(int64_t v) {
  Lin l;
  l.constant = v;
  return l;
}

Lin varLin(unsigned i) {
  Lin l;
  l.c.assign(i + 1, 0);
  l.c[i] = 1;
  return l;
}

std::optional<int64_t> narrow(Int v) {
  if (v > std::numeric_limits<int64_t>::max() ||
      v < std::numeric_limits<int64_t>::min())
    return std::nullopt;
  return int64_t(v);
}

/// a * x + b * y + k; nullopt when a coefficient leaves int64.
std::optional<Lin> combine(const Lin &x, int64_t a, const Lin &y, int64_t b,
                           int64_t k = 0) {
  Lin r;
  r.c.resize(std::max(x.c.size(), y.c.size()));
  for (unsigned i = 0, e = r.c.size(); i < e; ++i) {
    auto v = narrow(Int(a) * x.at(i) + Int(b) * y.at(i));
    if (!v)
      return std::nullopt;
    r.c[i] = *v;
  }
  auto k2 = narrow(Int(a) * x.constant + Int(b) * y.constant + k);
  if (!k2)
    return std::nullopt;
  r.constant = *k2;
  return r;
}

/// A linear form valid where `where` holds.
struct Piece {
  PresburgerSet where;
  Lin value;
};
using Pieces = SmallVector<Piece, 1>;

/// A value independent of q and kv, standing for itself in the sets; the
/// first index value of the same value met is the term bounds are written
/// with (the ops the mask has), else the root.
struct Symbol {
  Value root, indexValue;
  Range range;
  bool boolean;
  Value term() const { return indexValue ? indexValue : root; }
};

/// Translates a predicate over (q, k) into Presburger sets.
class Translator {
public:
  Translator(Value q, Value k) : q(q), k(k) {}

  FailureOr<PresburgerSet> boolean(Value v);
  PresburgerSpace space() const {
    return PresburgerSpace::getSetSpace(2, symbols.size(), 0);
  }
  PresburgerSet universe() const { return PresburgerSet::getUniverse(space()); }
  PresburgerSet empty() const { return PresburgerSet::getEmpty(space()); }
  PresburgerSet aligned(PresburgerSet s) const;
  /// {l >= 0}, or {l == 0}.
  PresburgerSet constraint(const Lin &l, bool equality = false) const;
  /// In-range coordinates: q >= 0, kv >= 0, boolean symbols 0 or 1.
  PresburgerSet domain() const;

  SmallVector<Symbol> symbols;
  Operation *failedOp = nullptr;
  std::string reason;
  bool large = false; // the failure is the size of the sets, not an op

private:
  bool depends(Value v);
  std::pair<Value, Range> leaf(Value v);
  Range inferredRange(Value v);
  unsigned symbol(Value v, bool boolean);
  Range range(const Lin &l) const;
  LogicalResult fail(Operation *op, const Twine &why);
  LogicalResult tooLarge(Operation *op, const Twine &why);
  LogicalResult bounded(PresburgerSet &s, Operation *op);
  FailureOr<PresburgerSet> minus(const PresburgerSet &a,
                                 const PresburgerSet &b, Operation *op);

  FailureOr<Pieces> integer(Value v);
  void noteIndexValue(Value v, const Pieces &pieces);
  FailureOr<Pieces> integerOp(Operation *op);
  FailureOr<Pieces>
  cross(Operation *op, Value a, Value b,
        function_ref<std::optional<Lin>(const Lin &, const Lin &)> f);
  FailureOr<Pieces> cast(Operation *op);
  FailureOr<Pieces> select(arith::SelectOp op);
  FailureOr<Pieces> minMax(Operation *op, P pred);
  FailureOr<Pieces> abs(math::AbsIOp op);
  FailureOr<Pieces> fromBoolean(Operation *op, int64_t trueValue);

  FailureOr<PresburgerSet> booleanOp(Operation *op);
  FailureOr<PresburgerSet> compare(arith::CmpIOp op);
  FailureOr<PresburgerSet> compareLins(P pred, const Lin &a, const Lin &b);
  FailureOr<PresburgerSet> compareBools(arith::CmpIOp op);

  Value q, k;
  DenseMap<Value, bool> dependsMemo;
  DenseMap<Value, PresburgerSet> booleanMemo;
  DenseMap<Value, Pieces> integerMemo;
  IntRanges ranges;
};

} // namespace

/// Why `op`, whose value depends on the coordinates, is not linear.
static std::string notLinearReason(Operation *op) {
  if (!isMemoryEffectFree(op))
    return "loads at a place that depends on the coordinates";
  if (isa<arith::DivSIOp, arith::DivUIOp, arith::FloorDivSIOp,
          arith::CeilDivSIOp, arith::CeilDivUIOp, arith::RemSIOp,
          arith::RemUIOp>(op))
    return "divides a value that depends on the coordinates";
  if (isa<arith::MulIOp>(op))
    return "multiplies by a value that is not a constant";
  if (isa<arith::ShLIOp, arith::ShRSIOp, arith::ShRUIOp, arith::AndIOp,
          arith::OrIOp, arith::XOrIOp>(op))
    return "is a bitwise operation on integers";
  auto isFloat = [](Type t) { return isa<FloatType>(t); };
  if (llvm::any_of(op->getOperandTypes(), isFloat) ||
      llvm::any_of(op->getResultTypes(), isFloat))
    return "computes in floating point";
  return "is not an integer sum, scaling, comparison, select, min, max, abs "
         "or cast";
}

//===----------------------------------------------------------------------===//
// Symbols and sets
//===----------------------------------------------------------------------===//

bool Translator::depends(Value v) {
  if (v == q || v == k)
    return true;
  auto it = dependsMemo.find(v);
  if (it != dependsMemo.end())
    return it->second;
  Operation *def = v.getDefiningOp();
  Region *coords = q.getParentRegion();
  bool r = false;
  if (def && coords->isAncestor(def->getParentRegion()))
    r = def->getNumRegions() > 0 || // may read q inside: not linear
        llvm::any_of(def->getOperands(), [&](Value o) { return depends(o); });
  dependsMemo[v] = r;
  return r;
}

/// The value `v` stands for once casts that keep every value are stripped,
/// and its range: index block arguments are sizes or coordinates.
std::pair<Value, Range> Translator::leaf(Value v) {
  Operation *def = v.getDefiningOp();
  if (def && isa<arith::IndexCastOp, arith::ExtSIOp>(def) &&
      !def->getOperand(0).getType().isInteger(1)) {
    auto [root, r] = leaf(def->getOperand(0));
    if (fits(r, v.getType()))
      return {root, r};
  }
  if (v.getType().isInteger(1))
    return {v, Range{0, 1}};
  return {v, inferredRange(v)};
}

Range Translator::inferredRange(Value v) {
  ConstantIntRanges r = ranges.of(v);
  if (r.smin().getBitWidth() > 64)
    return {};
  return {Int(r.smin().getSExtValue()), Int(r.smax().getSExtValue())};
}

unsigned Translator::symbol(Value v, bool boolean) {
  auto [root, r] = leaf(v);
  for (auto [i, s] : llvm::enumerate(symbols))
    if (s.root == root)
      return i;
  symbols.push_back({root, Value(), r, boolean});
  return symbols.size() - 1;
}

Range Translator::range(const Lin &l) const {
  const Int coord = kSizeLimit - 1, cap = Int(1) << 100;
  Range r{Int(l.constant), Int(l.constant)};
  for (unsigned i = 0, e = l.c.size(); i < e; ++i) {
    if (!l.c[i])
      continue;
    Range v = i < 2 ? Range{0, coord} : symbols[i - 2].range;
    if (l.c[i] < 0)
      v = {v.hi ? std::optional<Int>(-*v.hi) : std::nullopt,
           v.lo ? std::optional<Int>(-*v.lo) : std::nullopt};
    Int m = l.c[i] < 0 ? -Int(l.c[i]) : Int(l.c[i]);
    auto add = [&](std::optional<Int> &acc, std::optional<Int> x) {
      if (acc && x && -cap < *x && *x < cap)
        acc = *acc + m * *x;
      else
        acc = std::nullopt;
    };
    add(r.lo, v.lo);
    add(r.hi, v.hi);
  }
  return r;
}

PresburgerSet Translator::aligned(PresburgerSet s) const {
  unsigned have = s.getSpace().getNumSymbolVars();
  if (have < symbols.size())
    s.insertVarInPlace(VarKind::Symbol, have, symbols.size() - have);
  return s;
}

PresburgerSet Translator::constraint(const Lin &l, bool equality) const {
  IntegerPolyhedron poly(space());
  SmallVector<int64_t> row(symbols.size() + 3, 0);
  for (unsigned i = 0, e = symbols.size() + 2; i < e; ++i)
    row[i] = l.at(i);
  row.back() = l.constant;
  if (equality)
    poly.addEquality(row);
  else
    poly.addInequality(row);
  return PresburgerSet(poly);
}

PresburgerSet Translator::domain() const {
  // 0 <= q, kv < kSizeLimit: a constraint that every in-range pair meets
  // (kv >= q - 2^40) is then redundant, and not written into the split.
  PresburgerSet d = constraint(varLin(0)).intersect(constraint(varLin(1)));
  for (unsigned coord : {0u, 1u})
    d = d.intersect(
        constraint(*combine(varLin(coord), -1, Lin(), 0, kSizeLimit - 1)));
  for (auto [i, s] : llvm::enumerate(symbols)) {
    if (!s.boolean)
      continue;
    d = d.intersect(constraint(varLin(i + 2)))
            .intersect(constraint(*combine(varLin(i + 2), -1, Lin(), 0, 1)));
  }
  return d;
}

LogicalResult Translator::fail(Operation *op, const Twine &why) {
  if (!failedOp) {
    failedOp = op;
    reason = why.str();
  }
  return failure();
}

LogicalResult Translator::tooLarge(Operation *op, const Twine &why) {
  if (!failedOp)
    large = true;
  return fail(op, why);
}

/// Keeps `s` small: coalesced when it grows, a failure past kMaxPieces.
LogicalResult Translator::bounded(PresburgerSet &s, Operation *op) {
  if (s.getNumDisjuncts() > 8)
    s = s.coalesce();
  if (s.getNumDisjuncts() > kMaxPieces)
    return tooLarge(op, "has more than " + Twine(kMaxPieces) + " linear pieces");
  return success();
}

/// a \ b, unless it may cost too much: subtracting a union of pieces
/// splits every piece of `a` along every constraint of every piece of `b`.
FailureOr<PresburgerSet> Translator::minus(const PresburgerSet &a,
                                           const PresburgerSet &b,
                                           Operation *op) {
  Int cost = a.getNumDisjuncts();
  for (const IntegerRelation &piece : b.getAllDisjuncts()) {
    cost *= std::max(1u, piece.getNumInequalities() +
                             2 * piece.getNumEqualities());
    if (cost > Int(kMaxPieces) * kMaxPieces)
      return tooLarge(op, "has too many linear pieces to negate");
  }
  return a.subtract(b);
}

//===----------------------------------------------------------------------===//
// Integer values
//===----------------------------------------------------------------------===//

FailureOr<Pieces> Translator::integer(Value v) {
  auto single = [&](Lin l) { return Pieces{{universe(), std::move(l)}}; };
  if (v == q || v == k)
    return single(varLin(v == q ? 0 : 1));
  APInt cst;
  if (matchPattern(v, m_ConstantInt(&cst)) && cst.getBitWidth() > 1 &&
      cst.getSignificantBits() <= 64)
    return single(constantLin(cst.getSExtValue()));
  if (auto it = integerMemo.find(v); it != integerMemo.end()) {
    Pieces r = it->second;
    for (Piece &p : r)
      p.where = aligned(p.where);
    return r;
  }
  Operation *def = v.getDefiningOp();
  bool dependent = depends(v);
  FailureOr<Pieces> r = failure();
  // Values independent of q and kv are sums of symbols where that is exact,
  // else symbols themselves.
  if (def && (dependent || isa<arith::AddIOp, arith::SubIOp, arith::MulIOp,
                               arith::IndexCastOp, arith::ExtSIOp>(def)))
    r = integerOp(def);
  if (failed(r) && dependent)
    return failure();
  if (failed(r)) {
    failedOp = nullptr;
    large = false;
    r = single(varLin(symbol(v, /*boolean=*/false) + 2));
  }
  noteIndexValue(v, *r);
  integerMemo[v] = *r;
  return r;
}

/// Remembers `v` as the index value of a symbol it is equal to.
void Translator::noteIndexValue(Value v, const Pieces &pieces) {
  if (!v.getType().isIndex() || depends(v) || pieces[0].value.constant)
    return; // independent values are one piece
  const Lin &l = pieces[0].value;
  auto nonZero = llvm::make_filter_range(llvm::seq<unsigned>(0, l.c.size()),
                                         [&](unsigned i) { return l.c[i]; });
  if (llvm::range_size(nonZero) != 1)
    return;
  unsigned i = *nonZero.begin();
  if (i < 2 || l.c[i] != 1)
    return;
  Symbol &s = symbols[i - 2];
  if (!s.indexValue && !s.root.getType().isIndex())
    s.indexValue = v;
}

FailureOr<Pieces> Translator::integerOp(Operation *op) {
  Type t = op->getResult(0).getType();
  if (!t.isIntOrIndex() || t.isInteger(1))
    return fail(op, notLinearReason(op));
  FailureOr<Pieces> r = failure();
  if (auto add = dyn_cast<arith::AddIOp>(op))
    r = cross(op, add.getLhs(), add.getRhs(),
              [](const Lin &a, const Lin &b) { return combine(a, 1, b, 1); });
  else if (auto sub = dyn_cast<arith::SubIOp>(op))
    r = cross(op, sub.getLhs(), sub.getRhs(),
              [](const Lin &a, const Lin &b) { return combine(a, 1, b, -1); });
  else if (auto mul = dyn_cast<arith::MulIOp>(op))
    r = cross(op, mul.getLhs(), mul.getRhs(),
              [](const Lin &a, const Lin &b) -> std::optional<Lin> {
                bool aConst = llvm::all_of(a.c, [](int64_t c) { return !c; });
                bool bConst = llvm::all_of(b.c, [](int64_t c) { return !c; });
                if (aConst)
                  return combine(b, a.constant, Lin(), 0);
                if (bConst)
                  return combine(a, b.constant, Lin(), 0);
                return std::nullopt;
              });
  else if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
               arith::ExtUIOp, arith::TruncIOp>(op))
    r = cast(op);
  else if (auto sel = dyn_cast<arith::SelectOp>(op))
    r = select(sel);
  else if (isa<arith::MinSIOp>(op))
    r = minMax(op, P::sle);
  else if (isa<arith::MaxSIOp>(op))
    r = minMax(op, P::sge);
  else if (isa<arith::MinUIOp>(op))
    r = minMax(op, P::ule);
  else if (isa<arith::MaxUIOp>(op))
    r = minMax(op, P::uge);
  else if (auto absOp = dyn_cast<math::AbsIOp>(op))
    r = abs(absOp);
  else
    return fail(op, notLinearReason(op));
  if (failed(r))
    return failure();
  for (Piece &p : *r)
    if (!fits(range(p.value), t))
      return fail(op, t.isIndex()
                          ? Twine("may wrap in index (64 bits)")
                          : "may wrap in i" + Twine(t.getIntOrFloatBitWidth()));
  return r;
}

/// f(a, b) on every pair of pieces that overlap.
FailureOr<Pieces> Translator::cross(
    Operation *op, Value a, Value b,
    function_ref<std::optional<Lin>(const Lin &, const Lin &)> f) {
  FailureOr<Pieces> pa = integer(a);
  if (failed(pa))
    return failure();
  FailureOr<Pieces> pb = integer(b);
  if (failed(pb))
    return failure();
  Pieces r;
  for (const Piece &x : *pa) {
    for (const Piece &y : *pb) {
      PresburgerSet w = aligned(x.where).intersect(aligned(y.where));
      if (w.isIntegerEmpty())
        continue;
      std::optional<Lin> v = f(x.value, y.value);
      if (!v)
        return fail(op, isa<arith::MulIOp>(op)
                            ? notLinearReason(op)
                            : "has a coefficient beyond 64 bits");
      r.push_back({w, *v});
    }
  }
  if (r.size() > kMaxPieces)
    return tooLarge(op, "has more than " + Twine(kMaxPieces) + " linear pieces");
  return r;
}

/// Casts keep the value where it fits the result type (checked by the
/// caller); a zero extension of a negative value adds 2^width.
FailureOr<Pieces> Translator::cast(Operation *op) {
  Value in = op->getOperand(0);
  if (in.getType().isInteger(1))
    return fromBoolean(op, isa<arith::ExtSIOp>(op) ? -1 : 1);
  FailureOr<Pieces> r = integer(in);
  if (failed(r) || !isa<arith::ExtUIOp, arith::IndexCastUIOp>(op) ||
      in.getType().isIndex())
    return r;
  unsigned width = in.getType().getIntOrFloatBitWidth();
  Pieces out;
  for (const Piece &p : *r) {
    Range pr = range(p.value);
    if (pr.lo && *pr.lo >= 0) {
      out.push_back(p);
      continue;
    }
    if (width >= 63)
      return fail(op, "zero-extends a value that may be negative");
    PresburgerSet nonNeg = constraint(p.value);
    out.push_back({p.where.intersect(nonNeg), p.value});
    Lin wrapped = p.value;
    wrapped.constant += int64_t(1) << width;
    out.push_back({p.where.subtract(nonNeg), wrapped});
  }
  return out;
}

/// An i1 as an integer: `trueValue` where it holds, else 0.
FailureOr<Pieces> Translator::fromBoolean(Operation *op, int64_t trueValue) {
  FailureOr<PresburgerSet> s = boolean(op->getOperand(0));
  if (failed(s))
    return failure();
  PresburgerSet yes = aligned(*s);
  FailureOr<PresburgerSet> no = minus(universe(), yes, op);
  if (failed(no))
    return failure();
  return Pieces{{yes, constantLin(trueValue)}, {*no, constantLin(0)}};
}

FailureOr<Pieces> Translator::select(arith::SelectOp op) {
  FailureOr<PresburgerSet> c = boolean(op.getCondition());
  if (failed(c))
    return failure();
  FailureOr<Pieces> t = integer(op.getTrueValue());
  if (failed(t))
    return failure();
  FailureOr<Pieces> f = integer(op.getFalseValue());
  if (failed(f))
    return failure();
  PresburgerSet yes = aligned(*c);
  FailureOr<PresburgerSet> no = minus(universe(), yes, op);
  if (failed(no))
    return failure();
  Pieces r;
  for (const Piece &p : *t)
    r.push_back({aligned(p.where).intersect(yes), p.value});
  for (const Piece &p : *f)
    r.push_back({aligned(p.where).intersect(*no), p.value});
  return r;
}

/// min (pred sle / ule) or max (sge / uge): a where a pred b holds, else b.
FailureOr<Pieces> Translator::minMax(Operation *op, P pred) {
  FailureOr<Pieces> pa = integer(op->getOperand(0));
  if (failed(pa))
    return failure();
  FailureOr<Pieces> pb = integer(op->getOperand(1));
  if (failed(pb))
    return failure();
  Pieces r;
  for (const Piece &x : *pa) {
    for (const Piece &y : *pb) {
      FailureOr<PresburgerSet> first = compareLins(pred, x.value, y.value);
      if (failed(first))
        return fail(op, "has a coefficient beyond 64 bits");
      PresburgerSet w = aligned(x.where).intersect(aligned(y.where));
      r.push_back({w.intersect(*first), x.value});
      r.push_back({w.subtract(*first), y.value});
    }
  }
  return r;
}

FailureOr<Pieces> Translator::abs(math::AbsIOp op) {
  FailureOr<Pieces> pa = integer(op.getOperand());
  if (failed(pa))
    return failure();
  Pieces r;
  for (const Piece &x : *pa) {
    PresburgerSet nonNeg = constraint(x.value), w = aligned(x.where);
    r.push_back({w.intersect(nonNeg), x.value});
    std::optional<Lin> neg = combine(x.value, -1, Lin(), 0);
    if (!neg)
      return fail(op, "has a coefficient beyond 64 bits");
    r.push_back({w.subtract(nonNeg), *neg});
  }
  return r;
}

//===----------------------------------------------------------------------===//
// Booleans
//===----------------------------------------------------------------------===//

FailureOr<PresburgerSet> Translator::boolean(Value v) {
  APInt cst;
  if (matchPattern(v, m_ConstantInt(&cst)) && cst.getBitWidth() == 1)
    return cst.isOne() ? universe() : empty();
  if (auto it = booleanMemo.find(v); it != booleanMemo.end())
    return aligned(it->second);
  bool dependent = depends(v);
  FailureOr<PresburgerSet> r = failure();
  if (Operation *def = v.getDefiningOp())
    r = booleanOp(def);
  else if (dependent)
    return failure(); // unreachable: only q and k are dependent arguments
  if (failed(r) && dependent)
    return failure();
  if (failed(r)) {
    failedOp = nullptr; // an opaque flag: a 0/1 symbol
    large = false;
    r = constraint(
        *combine(varLin(symbol(v, /*boolean=*/true) + 2), 1, Lin(), 0, -1));
  }
  if (failed(bounded(*r, v.getDefiningOp())))
    return failure();
  booleanMemo.try_emplace(v, *r);
  return r;
}

FailureOr<PresburgerSet> Translator::booleanOp(Operation *op) {
  if (auto cmp = dyn_cast<arith::CmpIOp>(op))
    return cmp.getLhs().getType().isInteger(1) ? compareBools(cmp)
                                               : compare(cmp);
  if (auto sel = dyn_cast<arith::SelectOp>(op)) {
    FailureOr<PresburgerSet> c = boolean(sel.getCondition());
    if (failed(c))
      return failure();
    FailureOr<PresburgerSet> t = boolean(sel.getTrueValue());
    if (failed(t))
      return failure();
    FailureOr<PresburgerSet> f = boolean(sel.getFalseValue());
    if (failed(f))
      return failure();
    PresburgerSet yes = aligned(*c);
    FailureOr<PresburgerSet> no = minus(aligned(*f), yes, op);
    if (failed(no))
      return failure();
    return aligned(*t).intersect(yes).unionSet(*no);
  }
  if (!isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op) ||
      !op->getResult(0).getType().isInteger(1))
    return fail(op, notLinearReason(op));
  FailureOr<PresburgerSet> a = boolean(op->getOperand(0));
  if (failed(a))
    return failure();
  FailureOr<PresburgerSet> b = boolean(op->getOperand(1));
  if (failed(b))
    return failure();
  PresburgerSet x = aligned(*a), y = aligned(*b);
  if (isa<arith::AndIOp>(op))
    return x.intersect(y);
  if (isa<arith::OrIOp>(op))
    return x.unionSet(y);
  FailureOr<PresburgerSet> xOnly = minus(x, y, op);
  if (failed(xOnly))
    return failure();
  FailureOr<PresburgerSet> yOnly = minus(y, x, op);
  if (failed(yOnly))
    return failure();
  return xOnly->unionSet(*yOnly);
}

/// i1 operands: true is 1 unsigned, -1 signed.
FailureOr<PresburgerSet> Translator::compareBools(arith::CmpIOp op) {
  FailureOr<PresburgerSet> a = boolean(op.getLhs());
  if (failed(a))
    return failure();
  FailureOr<PresburgerSet> b = boolean(op.getRhs());
  if (failed(b))
    return failure();
  PresburgerSet x = aligned(*a), y = aligned(*b);
  FailureOr<PresburgerSet> notX = minus(universe(), x, op);
  if (failed(notX))
    return failure();
  FailureOr<PresburgerSet> notY = minus(universe(), y, op);
  if (failed(notY))
    return failure();
  const PresburgerSet &nx = *notX, &ny = *notY;
  switch (op.getPredicate()) {
  case P::eq:
    return x.intersect(y).unionSet(nx.intersect(ny));
  case P::ne:
    return x.intersect(ny).unionSet(nx.intersect(y));
  case P::ult:
  case P::sgt:
    return nx.intersect(y);
  case P::ule:
  case P::sge:
    return nx.unionSet(y);
  case P::ugt:
  case P::slt:
    return x.intersect(ny);
  case P::uge:
  case P::sle:
    return x.unionSet(ny);
  }
  llvm_unreachable("unknown predicate");
}

FailureOr<PresburgerSet> Translator::compare(arith::CmpIOp op) {
  FailureOr<Pieces> pa = integer(op.getLhs());
  if (failed(pa))
    return failure();
  FailureOr<Pieces> pb = integer(op.getRhs());
  if (failed(pb))
    return failure();
  PresburgerSet r = empty();
  for (const Piece &x : *pa) {
    for (const Piece &y : *pb) {
      FailureOr<PresburgerSet> c =
          compareLins(op.getPredicate(), x.value, y.value);
      if (failed(c))
        return fail(op, "has a coefficient beyond 64 bits");
      r = r.unionSet(
          aligned(x.where).intersect(aligned(y.where)).intersect(*c));
    }
  }
  return r;
}

/// The set where `a pred b`, for exact values a and b. Unsigned orders
/// agree with the signed one where both sides have the same sign; a
/// negative value is above every non-negative one.
FailureOr<PresburgerSet> Translator::compareLins(P pred, const Lin &a,
                                                 const Lin &b) {
  auto diff = [&](const Lin &x, const Lin &y, int64_t k) {
    return combine(y, 1, x, -1, k); // y - x + k
  };
  std::optional<Lin> ba = diff(a, b, 0), ba1 = diff(a, b, -1),
                     ab1 = diff(b, a, -1);
  if (!ba || !ba1 || !ab1)
    return failure();
  switch (pred) {
  case P::eq:
    return constraint(*ba, /*equality=*/true);
  case P::ne:
    return constraint(*ba1).unionSet(constraint(*ab1));
  case P::slt:
    return constraint(*ba1);
  case P::sle:
    return constraint(*ba);
  case P::sgt:
    return constraint(*ab1);
  case P::sge:
    return constraint(*diff(b, a, 0));
  default:
    break;
  }
  bool swap = pred == P::ugt || pred == P::uge;
  const Lin &x = swap ? b : a, &y = swap ? a : b;
  bool strict = pred == P::ult || pred == P::ugt;
  FailureOr<PresburgerSet> ordered =
      compareLins(strict ? P::slt : P::sle, x, y);
  if (failed(ordered))
    return failure();
  Range rx = range(x), ry = range(y);
  if (rx.lo && *rx.lo >= 0 && ry.lo && *ry.lo >= 0)
    return ordered;
  PresburgerSet xNonNeg = constraint(x), yNonNeg = constraint(y);
  PresburgerSet sameSign = xNonNeg.intersect(yNonNeg).unionSet(
      xNonNeg.complement().intersect(yNonNeg.complement()));
  return ordered->intersect(sameSign).unionSet(xNonNeg.subtract(yNonNeg));
}

//===----------------------------------------------------------------------===//
// The mask as pieces of constraints
//===----------------------------------------------------------------------===//

namespace {

/// One constraint over [q, kv, symbols..., constant]: >= 0, or == 0.
struct Row {
  SmallVector<int64_t> c;
  bool equality = false;
};
using Conjunction = SmallVector<Row>;

/// The mask's set on in-range coordinates and its convex pieces.
struct LinearSet {
  PresburgerSet set;
  SmallVector<Conjunction> pieces;
};

/// Whether `row` is a constraint of the domain (0 <= q, kv < kSizeLimit,
/// 0 <= s <= 1 for a flag s).
bool isDomainRow(const Row &row, const Translator &t) {
  if (row.equality)
    return false;
  unsigned nonZero = 0, at = 0;
  for (unsigned i = 0, e = row.c.size() - 1; i < e; ++i)
    if (row.c[i]) {
      ++nonZero;
      at = i;
    }
  if (nonZero != 1)
    return false;
  int64_t c = row.c[at], k = row.c.back();
  if (at < 2)
    return (c == 1 && k == 0) || (c == -1 && k == kSizeLimit - 1);
  return t.symbols[at - 2].boolean &&
         ((c == 1 && k == 0) || (c == -1 && k == 1));
}

/// The constraints of `rel` that the domain does not imply.
std::optional<Conjunction> readPiece(IntegerRelation rel, const Translator &t) {
  rel.removeTrivialRedundancy();
  rel.removeRedundantConstraints();
  Conjunction rows;
  for (unsigned i = 0, e = rel.getNumConstraints(); i < e; ++i) {
    Row row;
    row.equality = i >= rel.getNumInequalities();
    for (unsigned j = 0, n = rel.getNumCols(); j < n; ++j) {
      DynamicAPInt v = rel.atConstraint(i, j);
      if (v >= kCoefLimit || v <= -kCoefLimit)
        return std::nullopt;
      row.c.push_back(int64_t(v));
    }
    if (!isDomainRow(row, t))
      rows.push_back(std::move(row));
  }
  return rows;
}

/// Translates `visible`; nullopt, filling `why`, when it is not linear.
std::optional<LinearSet> translate(Translator &t, Value visible,
                                   MaskDiagnosis *why) {
  FailureOr<PresburgerSet> s = t.boolean(visible);
  if (failed(s)) {
    if (why) {
      why->nonLinearOp = t.failedOp;
      why->reason = t.reason;
      why->tooLarge = t.large;
    }
    return std::nullopt;
  }
  LinearSet r{t.aligned(*s).intersect(t.domain()).coalesce(), {}};
  for (unsigned i = 0, e = r.set.getNumDisjuncts(); i < e; ++i) {
    const IntegerRelation &rel = r.set.getDisjunct(i);
    if (rel.isIntegerEmpty())
      continue;
    std::optional<Conjunction> piece = readPiece(rel, t);
    if (!piece) {
      if (why)
        why->reason = "has a coefficient beyond 62 bits";
      return std::nullopt;
    }
    r.pieces.push_back(std::move(*piece));
  }
  if (why)
    why->numPieces = r.pieces.size();
  return r;
}

/// A form of `v` that says what it computes, not where: block arguments by
/// nesting depth and number, ops by name, attributes and operands.
std::string structuralKey(Value v, unsigned depth = 0) {
  auto padded = [](unsigned n) {
    std::string s = std::to_string(n);
    return std::string(s.size() < 8 ? 8 - s.size() : 0, '0') + s;
  };
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    unsigned level = 0;
    for (Operation *p = arg.getOwner()->getParentOp(); p; p = p->getParentOp())
      ++level;
    os << "arg" << padded(level) << "." << padded(arg.getArgNumber());
    return s;
  }
  Operation *op = v.getDefiningOp();
  os << op->getName() << "#" << cast<OpResult>(v).getResultNumber()
     << op->getAttrDictionary() << "(";
  for (Value operand : op->getOperands())
    os << (depth < 8 ? structuralKey(operand, depth + 1) : "?") << ",";
  os << ")";
  return s;
}

/// Index block arguments (sizes) come first in a sum, so that q + Nkv - Nq
/// reads as the kernels' diagonal offset.
bool isSize(Value v) { return isa<BlockArgument>(v) && v.getType().isIndex(); }

/// The symbols in a canonical order: sizes, then the other values, each by
/// their structural key. Spellings of one mask order them alike.
SmallVector<unsigned> symbolOrder(const Translator &t) {
  SmallVector<std::pair<bool, std::string>> keys;
  for (const Symbol &s : t.symbols)
    keys.push_back({!isSize(s.root), structuralKey(s.root)});
  SmallVector<unsigned> order(t.symbols.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::sort(order, [&](unsigned a, unsigned b) {
    return std::tie(keys[a], a) < std::tie(keys[b], b);
  });
  return order;
}

/// The terms of a row's symbol coefficients (from index 2 of `c`): sizes
/// added before sizes subtracted, then the rest, in `order`.
SmallVector<std::pair<Value, int64_t>>
terms(const Translator &t, ArrayRef<int64_t> c, ArrayRef<unsigned> order) {
  SmallVector<std::pair<Value, int64_t>> r;
  for (int pass = 0; pass < 3; ++pass)
    for (unsigned i : order) {
      int64_t a = c[i + 2];
      int cls = !isSize(t.symbols[i].root) ? 2 : a < 0 ? 1 : 0;
      if (a && cls == pass)
        r.push_back({t.symbols[i].term(), a});
    }
  return r;
}

} // namespace

std::optional<LinearMask> mlir::cuir::analyzeLinearMask(Value visible, Value q,
                                                        Value k,
                                                        MaskDiagnosis *why) {
  Translator t(q, k);
  std::optional<LinearSet> s = translate(t, visible, why);
  if (!s)
    return std::nullopt;
  SmallVector<unsigned> order = symbolOrder(t);
  LinearMask mask;
  for (const Conjunction &piece : s->pieces) {
    SmallVector<LinearConstraint> &out = mask.pieces.emplace_back();
    for (const Row &row : piece) {
      LinearConstraint c;
      c.coefQ = row.c[0];
      c.coefKv = row.c[1];
      c.terms = terms(t, row.c, order);
      c.constant = row.c.back();
      c.isEquality = row.equality;
      out.push_back(std::move(c));
    }
  }
  return mask;
}

namespace {

/// Prints `scale` times the sum coefQ q + coefKv kv + terms + constant.
void printSum(raw_ostream &os, const LinearConstraint &c, int64_t scale,
              function_ref<void(raw_ostream &, Value)> name) {
  bool first = true;
  auto term = [&](int64_t a, function_ref<void()> printName) {
    a *= scale;
    if (!a)
      return;
    os << (a < 0 ? (first ? "-" : " - ") : (first ? "" : " + "));
    if (std::abs(a) != 1)
      os << std::abs(a) << " * ";
    printName();
    first = false;
  };
  term(c.coefQ, [&] { os << "q_idx"; });
  term(c.coefKv, [&] { os << "kv_idx"; });
  for (auto [v, a] : c.terms)
    term(a, [&, v = v] { name(os, v); });
  int64_t k = scale * c.constant;
  if (first)
    os << k;
  else if (k)
    os << (k < 0 ? " - " : " + ") << std::abs(k);
}

/// `kv_idx <= ...` (or q_idx) where a coordinate has coefficient +-1, else
/// `... >= 0`.
void printConstraint(raw_ostream &os, const LinearConstraint &c,
                     function_ref<void(raw_ostream &, Value)> name) {
  StringRef rel = c.isEquality ? " == " : " >= ";
  for (auto [coef, coordinate] :
       {std::pair(c.coefKv, "kv_idx"), std::pair(c.coefQ, "q_idx")}) {
    if (coef != 1 && coef != -1)
      continue;
    LinearConstraint rest = c;
    (coordinate[0] == 'k' ? rest.coefKv : rest.coefQ) = 0;
    // coef * x + rest >= 0: x >= -rest, or x <= rest.
    os << coordinate << (coef == 1 || c.isEquality ? rel : " <= ");
    printSum(os, rest, coef == 1 ? -1 : 1, name);
    return;
  }
  printSum(os, c, 1, name);
  os << rel << "0";
}

} // namespace

void mlir::cuir::printLinearMask(
    raw_ostream &os, const LinearMask &mask,
    function_ref<void(raw_ostream &, Value)> name) {
  if (mask.pieces.empty())
    os << "{}";
  llvm::interleave(
      mask.pieces, os,
      [&](ArrayRef<LinearConstraint> piece) {
        os << "{";
        llvm::interleave(
            piece, os,
            [&](const LinearConstraint &c) { printConstraint(os, c, name); },
            " and ");
        os << "}";
      },
      " or ");
}

//===----------------------------------------------------------------------===//
// One interval of keys per row
//===----------------------------------------------------------------------===//

namespace {

/// A key bound over [q, kv (0), symbols..., constant].
using BoundRow = SmallVector<int64_t>;
using Groups = SmallVector<SmallVector<BoundRow>>;

/// The kv bounds of one piece: lo (kv >= b) and hi (kv < b).
LogicalResult pieceBounds(const Conjunction &piece, const Translator &t,
                          SmallVector<BoundRow> &lo, SmallVector<BoundRow> &hi,
                          std::string &reason) {
  for (const Row &row : piece) {
    int64_t a = row.c[1];
    if (!a)
      continue; // q or the symbols alone: checked by the proof
    if (a != 1 && a != -1) {
      reason = "kv_idx has coefficient " + std::to_string(std::abs(a)) +
               " in a constraint";
      return failure();
    }
    // a * kv + e >= 0: kv >= -e (a = 1) or kv < e + 1 (a = -1).
    BoundRow e = row.c;
    e[1] = 0;
    BoundRow neg(e.size());
    for (unsigned i = 0; i < e.size(); ++i)
      neg[i] = -e[i];
    BoundRow low = a == 1 ? neg : e, high = a == 1 ? neg : e;
    high.back() += 1;
    if (a == 1 || row.equality)
      lo.push_back(low);
    if (a == -1 || row.equality)
      hi.push_back(high);
  }
  for (const BoundRow &b : llvm::concat<const BoundRow>(lo, hi)) {
    if (b[0] != 0 && b[0] != 1) {
      reason = "a key bound has slope " + std::to_string(b[0]) +
               " in q_idx, not 0 or 1";
      return failure();
    }
    for (unsigned i = 2; i + 1 < b.size(); ++i)
      if (b[i] && t.symbols[i - 2].boolean) {
        reason = "a key bound depends on a flag";
        return failure();
      }
  }
  return success();
}

/// The groups of a bound over a union of pieces: the row's lowest start
/// (highest end) over the pieces, min over pieces of max over each piece's
/// bounds distributed into max over choices of min. A piece unbounded on
/// that side makes the union unbounded.
FailureOr<Groups> unionGroups(ArrayRef<SmallVector<BoundRow>> perPiece) {
  Groups groups{{}};
  for (const SmallVector<BoundRow> &bounds : perPiece) {
    if (bounds.empty())
      return Groups{};
    Groups next;
    for (const SmallVector<BoundRow> &g : groups)
      for (const BoundRow &b : bounds) {
        SmallVector<BoundRow> h = g;
        if (!llvm::is_contained(h, b))
          h.push_back(b);
        next.push_back(std::move(h));
      }
    if (next.size() > kMaxPieces)
      return failure();
    groups = std::move(next);
  }
  return groups;
}

/// Whether one key bound is never above another on in-range coordinates
/// (for every value of the terms), decided on the Translator's sets.
class BoundOrder {
public:
  explicit BoundOrder(const Translator &t) : t(t) {}

  bool neverAbove(const BoundRow &a, const BoundRow &b) {
    auto [it, inserted] = memo.try_emplace({a, b}, false);
    if (!inserted)
      return it->second;
    // a - b - 1 >= 0 nowhere in the domain.
    Lin la, lb;
    la.c.assign(a.begin(), a.end() - 1);
    la.constant = a.back();
    lb.c.assign(b.begin(), b.end() - 1);
    lb.constant = b.back();
    std::optional<Lin> above = combine(la, 1, lb, -1, -1);
    bool r =
        above && t.constraint(*above).intersect(t.domain()).isIntegerEmpty();
    memo[{a, b}] = r;
    return r;
  }

  /// A constant bound of `width` columns.
  static BoundRow constant(size_t width, int64_t value) {
    BoundRow r(width, 0);
    r.back() = value;
    return r;
  }

private:
  const Translator &t;
  std::map<std::pair<BoundRow, BoundRow>, bool> memo;
};

/// Sorts and deduplicates, so that equal masks give equal bounds written
/// alike. Bounds are compared on in-range coordinates (BoundOrder), ties
/// kept once: a bound that never decides in its group goes (lo's groups
/// take the minimum, hi's the maximum: max(1, q + 1) is q + 1), so does a
/// group that never decides against another (lo takes the maximum of its
/// groups: max(min(n, q), min(n, q + 1)) is min(n, q + 1)), and a group
/// that every in-range key meets (lo <= 0, hi >= kSizeLimit).
void canonicalize(Groups &groups, ArrayRef<unsigned> order, bool isLo,
                  BoundOrder &cmp) {
  // lo: the lower one decides a minimum; hi: the higher one a maximum.
  auto decidesOver = [&](const BoundRow &a, const BoundRow &b) {
    return isLo ? cmp.neverAbove(a, b) : cmp.neverAbove(b, a);
  };
  if (!groups.empty() && !groups[0].empty()) {
    size_t width = groups[0][0].size();
    BoundRow keyLimit = BoundOrder::constant(width, isLo ? 0 : kSizeLimit);
    llvm::erase_if(groups, [&](const SmallVector<BoundRow> &g) {
      return llvm::any_of(
          g, [&](const BoundRow &b) { return decidesOver(b, keyLimit); });
    });
  }
  for (SmallVector<BoundRow> &g : groups) {
    SmallVector<BoundRow> kept;
    for (unsigned i = 0; i < g.size(); ++i) {
      bool decides = true;
      for (unsigned j = 0; j < g.size() && decides; ++j)
        decides = j == i || !decidesOver(g[j], g[i]) ||
                  (decidesOver(g[i], g[j]) && i < j);
      if (decides)
        kept.push_back(g[i]);
    }
    g = std::move(kept);
  }
  auto less = [&](const BoundRow &a, const BoundRow &b) {
    auto key = [&](const BoundRow &r) {
      SmallVector<int64_t> k{r[0]};
      for (unsigned i : order)
        k.push_back(r[i + 2]);
      k.push_back(r.back());
      return k;
    };
    return key(a) < key(b);
  };
  for (SmallVector<BoundRow> &g : groups)
    llvm::sort(g, less);
  // Group `g` adds nothing next to `other` where each bound of `other` has
  // one in `g` that never decides over it: lo takes the maximum of the
  // groups' minima, hi the minimum of their maxima.
  auto addsNothing = [&](const SmallVector<BoundRow> &g,
                         const SmallVector<BoundRow> &other) {
    return llvm::all_of(other, [&](const BoundRow &a) {
      return llvm::any_of(g,
                          [&](const BoundRow &b) { return decidesOver(b, a); });
    });
  };
  Groups kept;
  for (unsigned i = 0; i < groups.size(); ++i) {
    bool absorbed = false;
    // Two groups that each add nothing next to the other are equal: the
    // first stays.
    for (unsigned j = 0; j < groups.size() && !absorbed; ++j)
      absorbed = j != i && addsNothing(groups[i], groups[j]) &&
                 (j < i || !addsNothing(groups[j], groups[i]));
    if (!absorbed)
      kept.push_back(groups[i]);
  }
  llvm::sort(kept, [&](const auto &a, const auto &b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                        less);
  });
  groups = std::move(kept);
}

/// The set of keys [max lo, min hi) the groups describe.
PresburgerSet intervalSet(const Translator &t, const Groups &lo,
                          const Groups &hi) {
  PresburgerSet r = t.universe();
  auto side = [&](const Groups &groups, bool isLo) {
    for (const SmallVector<BoundRow> &g : groups) {
      PresburgerSet any = t.empty();
      for (const BoundRow &b : g) {
        // kv - b >= 0, or b - 1 - kv >= 0.
        Lin l;
        l.c.assign(b.begin(), b.end() - 1);
        l.constant = b.back();
        Lin kv = varLin(1);
        l = isLo ? *combine(kv, 1, l, -1) : *combine(l, 1, kv, -1, -1);
        any = any.unionSet(t.constraint(l));
      }
      r = r.intersect(any);
    }
  };
  side(lo, true);
  side(hi, false);
  return r;
}

AffineBound toAffine(const Translator &t, const BoundRow &b,
                     ArrayRef<unsigned> order) {
  AffineBound r;
  r.coefQ = b[0];
  r.terms = terms(t, b, order);
  r.constant = b.back();
  return r;
}

} // namespace

std::optional<KeyInterval> mlir::cuir::analyzeKeyInterval(Value visible,
                                                          Value q, Value k,
                                                          MaskDiagnosis *why) {
  Translator t(q, k);
  std::optional<LinearSet> s = translate(t, visible, why);
  if (!s)
    return std::nullopt;
  std::string reason =
      "its rows' keys are not one interval [lo, hi) with such bounds";
  auto notOne = [&]() -> std::optional<KeyInterval> {
    if (why)
      why->reason = reason;
    return std::nullopt;
  };
  SmallVector<SmallVector<BoundRow>> los, his;
  for (const Conjunction &piece : s->pieces)
    if (failed(pieceBounds(piece, t, los.emplace_back(), his.emplace_back(),
                           reason)))
      return notOne();
  SmallVector<unsigned> order = symbolOrder(t);
  Groups lo, hi;
  if (s->pieces.empty()) { // nothing visible: keys [0, 0)
    BoundRow zero(t.symbols.size() + 3, 0);
    hi.push_back({zero});
  } else {
    FailureOr<Groups> l = unionGroups(los), h = unionGroups(his);
    if (failed(l) || failed(h)) {
      reason = "too many combinations of key bounds";
      return notOne();
    }
    lo = std::move(*l);
    hi = std::move(*h);
  }
  BoundOrder boundOrder(t);
  canonicalize(lo, order, /*isLo=*/true, boundOrder);
  canonicalize(hi, order, /*isLo=*/false, boundOrder);
  // The interval is the mask, or the analysis says nothing.
  if (!intervalSet(t, lo, hi).intersect(t.domain()).isEqual(s->set))
    return notOne();
  KeyInterval r;
  for (const auto &[groups, out] :
       {std::pair(&lo, &r.lo), std::pair(&hi, &r.hi)})
    for (const SmallVector<BoundRow> &g : *groups) {
      SmallVector<AffineBound, 2> &o = out->emplace_back();
      for (const BoundRow &b : g)
        o.push_back(toAffine(t, b, order));
    }
  return r;
}

Value mlir::cuir::materializeBound(OpBuilder &b, Location loc,
                                   const AffineBound &bound, Value qValue,
                                   IRMapping &outside, Region *inner,
                                   DenseMap<Value, Value> *indexCasts) {
  std::function<Value(Value)> clone = [&](Value v) -> Value {
    if (Value m = outside.lookupOrNull(v))
      return m;
    Operation *def = v.getDefiningOp();
    if (!def || !inner->isAncestor(def->getParentRegion()))
      return v;
    for (Value operand : def->getOperands())
      clone(operand);
    Operation *c = b.clone(*def, outside);
    return c->getResult(cast<OpResult>(v).getResultNumber());
  };
  Value acc = arith::ConstantIndexOp::create(b, loc, bound.constant);
  if (bound.coefQ)
    acc = arith::AddIOp::create(b, loc, acc, qValue);
  for (auto [term, sign] : bound.terms) {
    Value t = clone(term);
    if (!t.getType().isIndex()) { // an integer term, compared with keys
      Value cast = indexCasts ? indexCasts->lookup(t) : Value();
      if (!cast) {
        cast = arith::IndexCastOp::create(b, loc, b.getIndexType(), t);
        if (indexCasts)
          (*indexCasts)[t] = cast;
      }
      t = cast;
    }
    if (std::abs(sign) != 1)
      t = arith::MulIOp::create(
          b, loc, t, arith::ConstantIndexOp::create(b, loc, std::abs(sign)));
    acc = sign > 0 ? arith::AddIOp::create(b, loc, acc, t).getResult()
                   : arith::SubIOp::create(b, loc, acc, t).getResult();
  }
  return acc;
}

namespace {

/// Points (q, kv, Nq, Nkv, terms...) of the pieces of a linear mask and of
/// the causal region, as integer sets over one space.
class CausalSpace {
public:
  CausalSpace(const LinearMask &mask, Value nq, Value nkv) : nq(nq), nkv(nkv) {
    column(nq);
    column(nkv);
    for (const auto &piece : mask.pieces)
      for (const LinearConstraint &c : piece)
        for (auto [v, coef] : c.terms)
          column(v);
    numVars = 2 + columns.size();
  }

  /// The in-range pairs of `piece`.
  presburger::IntegerPolyhedron piece(ArrayRef<LinearConstraint> piece) {
    presburger::IntegerPolyhedron poly = inRange();
    for (const LinearConstraint &c : piece) {
      SmallVector<int64_t> r = row(c.coefQ, c.coefKv, c.terms, c.constant);
      if (c.isEquality)
        poly.addEquality(r);
      else
        poly.addInequality(r);
    }
    return poly;
  }

  /// The in-range pairs past the diagonal (`past`) or on and below it.
  presburger::IntegerPolyhedron causalSide(bool past) {
    presburger::IntegerPolyhedron poly = inRange();
    // past: kv - q - Nkv + Nq - 1 >= 0; else q - kv + Nkv - Nq >= 0.
    if (past)
      poly.addInequality(row(-1, 1, {{nkv, -1}, {nq, 1}}, -1));
    else
      poly.addInequality(row(1, -1, {{nkv, 1}, {nq, -1}}, 0));
    return poly;
  }

private:
  unsigned column(Value v) {
    return columns.insert({v, 2 + columns.size()}).first->second;
  }
  SmallVector<int64_t> row(int64_t q, int64_t kv,
                           ArrayRef<std::pair<Value, int64_t>> terms,
                           int64_t constant) {
    SmallVector<int64_t> r(numVars + 1, 0);
    r[0] = q, r[1] = kv, r[numVars] = constant;
    for (auto [v, coef] : terms)
      r[columns.lookup(v)] += coef;
    return r;
  }
  presburger::IntegerPolyhedron inRange() {
    presburger::IntegerPolyhedron poly(
        presburger::PresburgerSpace::getSetSpace(numVars));
    poly.addInequality(row(1, 0, {}, 0));           // q >= 0
    poly.addInequality(row(0, 1, {}, 0));           // kv >= 0
    poly.addInequality(row(-1, 0, {{nq, 1}}, -1));  // q <= Nq - 1
    poly.addInequality(row(0, -1, {{nkv, 1}}, -1)); // kv <= Nkv - 1
    return poly;
  }

  Value nq, nkv;
  llvm::MapVector<Value, unsigned> columns;
  unsigned numVars = 0;
};

} // namespace

CausalComparison mlir::cuir::compareWithCausal(const LinearMask &mask, Value nq,
                                               Value nkv) {
  CausalSpace space(mask, nq, nkv);
  CausalComparison out;
  out.insideCausal = llvm::all_of(mask.pieces, [&](const auto &piece) {
    presburger::IntegerPolyhedron past = space.piece(piece);
    past.append(space.causalSide(/*past=*/true));
    return past.isIntegerEmpty();
  });
  presburger::PresburgerSet uncovered(space.causalSide(/*past=*/false));
  for (const auto &piece : mask.pieces)
    uncovered =
        uncovered.subtract(presburger::PresburgerSet(space.piece(piece)));
  out.coversCausal = uncovered.isIntegerEmpty();
  return out;
}
