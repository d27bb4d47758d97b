//===- MaskAnalysis.cpp - Mask predicates as key intervals ----------------===//

#include "cuir/Transfer/MaskAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::cuir;

namespace {

bool dependsOn(Value v, Value x, int depth = 0) {
  if (v == x)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 64)
    return false;
  for (Value operand : def->getOperands())
    if (dependsOn(operand, x, depth + 1))
      return true;
  return false;
}

/// `v` without an index-to-i32 cast (the tracer computes FlexAttention's
/// int32 coordinates so). Exact for the coordinates: they fit int32.
Value throughIndexCast(Value v) {
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    if (cast.getIn().getType().isIndex() && cast.getType().isInteger(32))
      return cast.getIn();
  return v;
}

/// Whether i32 arithmetic on `b` cannot wrap: one coordinate or size (q, or
/// one index term) plus a constant below 2^30 in magnitude. Coordinates and
/// sizes are below 2^30: a sequence of 2^30 tokens of the smallest head
/// (64 x 2 bytes) is 128 GiB for Q alone. Terms of i32 type have unknown
/// range.
bool fitsInt32(const AffineBound &b) {
  bool indexTerms = llvm::all_of(
      b.terms, [](auto t) { return t.first.getType().isIndex(); });
  return indexTerms && b.terms.size() + b.coefQ <= 1 &&
         std::abs(b.constant) < (int64_t(1) << 30);
}

/// Parses an index expression into coefQ * q + terms + constant.
std::optional<AffineBound> parseAffine(Value v, Value q, Value k);

/// The same for an i32 expression (index operands cast to i32): the bound it
/// stands for when the i32 arithmetic cannot wrap. A lone i32 term (a
/// loaded value compared with a key) is exact as it is.
std::optional<AffineBound> parseAffineI32(Value v, Value q, Value k) {
  if (!v.getType().isInteger(32))
    return parseAffine(v, q, k);
  if (!v.getDefiningOp<arith::AddIOp>() && !v.getDefiningOp<arith::SubIOp>() &&
      !v.getDefiningOp<arith::IndexCastOp>() &&
      !matchPattern(v, m_Constant()) && !dependsOn(v, q) && !dependsOn(v, k)) {
    AffineBound lone;
    lone.terms.push_back({v, 1});
    return lone;
  }
  std::optional<AffineBound> b = parseAffine(v, q, k);
  if (!b || !fitsInt32(*b))
    return std::nullopt;
  return b;
}

std::optional<AffineBound> parseAffine(Value v, Value q, Value k) {
  v = throughIndexCast(v);
  AffineBound r;
  if (v == q) {
    r.coefQ = 1;
    return r;
  }
  if (v == k)
    return std::nullopt;
  APInt cst;
  if (matchPattern(v, m_ConstantInt(&cst))) {
    r.constant = cst.getSExtValue();
    return r;
  }
  auto combine = [&](Value lhs, Value rhs,
                     int64_t sign) -> std::optional<AffineBound> {
    auto a = parseAffine(lhs, q, k), b = parseAffine(rhs, q, k);
    if (!a || !b)
      return std::nullopt;
    AffineBound s = *a;
    s.coefQ += sign * b->coefQ;
    for (auto [t, c] : b->terms)
      s.terms.push_back({t, sign * c});
    s.constant += sign * b->constant;
    if (s.coefQ < 0 || s.coefQ > 1)
      return std::nullopt; // bounds must grow with q, at slope 0 or 1
    return s;
  };
  if (auto add = v.getDefiningOp<arith::AddIOp>())
    return combine(add.getLhs(), add.getRhs(), 1);
  if (auto sub = v.getDefiningOp<arith::SubIOp>())
    return combine(sub.getLhs(), sub.getRhs(), -1);
  // Anything else independent of q and k is an opaque term.
  if (dependsOn(v, q) || dependsOn(v, k))
    return std::nullopt;
  r.terms.push_back({v, 1});
  return r;
}

AffineBound plus(AffineBound b, int64_t c) {
  b.constant += c;
  return b;
}

arith::CmpIPredicate swapSides(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  switch (p) {
  case P::slt: return P::sgt;
  case P::sle: return P::sge;
  case P::sgt: return P::slt;
  case P::sge: return P::sle;
  case P::ult: return P::ugt;
  case P::ule: return P::uge;
  case P::ugt: return P::ult;
  case P::uge: return P::ule;
  default: return p;
  }
}

/// The keys satisfying `cmp` for one row (indices are non-negative, so
/// unsigned and signed orders agree).
std::optional<KeyInterval> fromCompare(arith::CmpIOp cmp, Value q, Value k) {
  using P = arith::CmpIPredicate;
  P pred = cmp.getPredicate();
  Value lhs = cmp.getLhs(), rhs = cmp.getRhs();
  if (throughIndexCast(rhs) == k) {
    std::swap(lhs, rhs);
    pred = swapSides(pred);
  }
  if (throughIndexCast(lhs) != k)
    return std::nullopt;
  // An unsigned order agrees with the signed one for non-negative bounds
  // only; the tracer writes torch's comparisons, all signed.
  if (!lhs.getType().isIndex() &&
      llvm::is_contained({P::ult, P::ule, P::ugt, P::uge}, pred))
    return std::nullopt;
  auto x = parseAffineI32(rhs, q, k);
  if (!x)
    return std::nullopt;
  KeyInterval r;
  switch (pred) {
  case P::slt: case P::ult: r.hi.push_back({*x}); break;
  case P::sle: case P::ule: r.hi.push_back({plus(*x, 1)}); break;
  case P::sgt: case P::ugt: r.lo.push_back({plus(*x, 1)}); break;
  case P::sge: case P::uge: r.lo.push_back({*x}); break;
  default: return std::nullopt;
  }
  return r;
}

std::optional<KeyInterval> analyze(Value v, Value q, Value k) {
  if (auto cmp = v.getDefiningOp<arith::CmpIOp>())
    return fromCompare(cmp, q, k);
  if (auto andOp = v.getDefiningOp<arith::AndIOp>()) {
    auto a = analyze(andOp.getLhs(), q, k), b = analyze(andOp.getRhs(), q, k);
    if (!a || !b)
      return std::nullopt;
    a->lo.append(b->lo.begin(), b->lo.end());
    a->hi.append(b->hi.begin(), b->hi.end());
    return a;
  }
  if (auto orOp = v.getDefiningOp<arith::OrIOp>()) {
    // A union stays one interval when both sides are prefixes (start at the
    // first key) or both suffixes.
    auto a = analyze(orOp.getLhs(), q, k), b = analyze(orOp.getRhs(), q, k);
    if (!a || !b)
      return std::nullopt;
    KeyInterval r;
    if (a->lo.empty() && b->lo.empty() && a->hi.size() == 1 &&
        b->hi.size() == 1) {
      r.hi.push_back(a->hi[0]);
      r.hi[0].append(b->hi[0].begin(), b->hi[0].end());
      return r;
    }
    if (a->hi.empty() && b->hi.empty() && a->lo.size() == 1 &&
        b->lo.size() == 1) {
      r.lo.push_back(a->lo[0]);
      r.lo[0].append(b->lo[0].begin(), b->lo[0].end());
      return r;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

} // namespace

std::optional<KeyInterval> mlir::cuir::analyzeKeyInterval(Value visible,
                                                          Value q, Value k) {
  return analyze(visible, q, k);
}

Value mlir::cuir::materializeBound(OpBuilder &b, Location loc,
                                   const AffineBound &bound, Value qValue,
                                   IRMapping &outside, Region *inner) {
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
    if (!t.getType().isIndex()) // a lone i32 term, compared with keys
      t = arith::IndexCastOp::create(b, loc, b.getIndexType(), t);
    for (int64_t i = 0; i < std::abs(sign); ++i)
      acc = sign > 0 ? arith::AddIOp::create(b, loc, acc, t).getResult()
                     : arith::SubIOp::create(b, loc, acc, t).getResult();
  }
  return acc;
}
