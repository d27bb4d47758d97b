//===- MaskAnalysisTest.cpp - The mask analysis against brute force -------===//
//
// Random mask predicates over (q, kv), built from the integer and boolean ops
// a tracer emits (sums, scalings, selects, min / max, abs, casts between
// widths, signed and unsigned compares, and / or / xor) and from some the
// analysis must refuse (division, remainder, products of coordinates), are
// given to analyzeLinearMask and analyzeKeyInterval. Whatever they return is
// checked against the predicate evaluated with the ops' own fixed-width
// semantics on every pair of a grid, for several values of the parameters:
// an answer is exact or it is a refusal.
//
//===----------------------------------------------------------------------===//

#include "cuir/Transfer/MaskAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/APInt.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <tuple>

using namespace mlir;
using namespace mlir::cuir;

namespace {

using Wide = __int128;

/// Builds one random predicate into a function
///   (q: index, kv: index, n: index, p: i32, f: i1) -> i1
/// where n stands for a size (non-negative), p for any i32 parameter and f
/// for a flag.
class Generator {
public:
  Generator(OpBuilder &b, Location loc, Block &body, unsigned seed)
      : b(b), loc(loc), rng(seed), q(body.getArgument(0)),
        kv(body.getArgument(1)), n(body.getArgument(2)), p(body.getArgument(3)),
        f(body.getArgument(4)) {}

  Value boolean(int depth) {
    if (depth <= 0)
      return compare(0);
    switch (pick(10)) {
    case 0:
    case 1:
    case 2:
      return compare(depth - 1);
    case 3:
      return arith::AndIOp::create(b, loc, boolean(depth - 1),
                                   boolean(depth - 1));
    case 4:
      return arith::OrIOp::create(b, loc, boolean(depth - 1),
                                  boolean(depth - 1));
    case 5: // not
      return arith::XOrIOp::create(b, loc, boolean(depth - 1),
                                   constantBool(true));
    case 6:
      return arith::XOrIOp::create(b, loc, boolean(depth - 1),
                                   boolean(depth - 1));
    case 7:
      return arith::SelectOp::create(b, loc, boolean(depth - 1),
                                     boolean(depth - 1), boolean(depth - 1));
    case 8: // i1 operands compare as 1 unsigned, -1 signed
      return arith::CmpIOp::create(b, loc, predicate(), boolean(depth - 1),
                                   boolean(depth - 1));
    default:
      return pick(2) ? Value(f) : constantBool(pick(2));
    }
  }

private:
  unsigned pick(unsigned n) { return rng() % n; }

  Value constantBool(bool v) {
    return arith::ConstantIntOp::create(b, loc, b.getI1Type(), v);
  }

  arith::CmpIPredicate predicate() {
    static const arith::CmpIPredicate all[] = {
        arith::CmpIPredicate::eq,  arith::CmpIPredicate::ne,
        arith::CmpIPredicate::slt, arith::CmpIPredicate::sle,
        arith::CmpIPredicate::sgt, arith::CmpIPredicate::sge,
        arith::CmpIPredicate::ult, arith::CmpIPredicate::ule,
        arith::CmpIPredicate::ugt, arith::CmpIPredicate::uge};
    // Signed orders and equalities most often: the masks people write.
    return all[pick(4) ? pick(6) : 6 + pick(4)];
  }

  Type anyIntType() {
    switch (pick(4)) {
    case 0:
      return b.getI32Type();
    case 1:
      return b.getI64Type();
    default:
      return b.getIndexType();
    }
  }

  Value compare(int depth) {
    Type t = anyIntType();
    return arith::CmpIOp::create(b, loc, predicate(), integer(depth, t),
                                 integer(depth, t));
  }

  Value constant(Type t) {
    int64_t v = static_cast<int64_t>(pick(17)) - 8;
    if (!pick(12)) // near the ends of i32: sums of these may wrap
      v = pick(2) ? INT32_MAX - static_cast<int64_t>(pick(4))
                  : INT32_MIN + static_cast<int64_t>(pick(4));
    if (t.isIndex())
      return arith::ConstantIndexOp::create(b, loc, v);
    return arith::ConstantIntOp::create(b, loc, t, v);
  }

  /// `v` (index, i32 or i64) as a value of type `t`, by a random cast.
  Value castTo(Value v, Type t) {
    Type from = v.getType();
    if (from == t)
      return v;
    if (from.isIndex() || t.isIndex())
      return pick(4) ? arith::IndexCastOp::create(b, loc, t, v).getResult()
                     : arith::IndexCastUIOp::create(b, loc, t, v).getResult();
    if (from.getIntOrFloatBitWidth() > t.getIntOrFloatBitWidth())
      return arith::TruncIOp::create(b, loc, t, v);
    return pick(4) ? arith::ExtSIOp::create(b, loc, t, v).getResult()
                   : arith::ExtUIOp::create(b, loc, t, v).getResult();
  }

  Value integer(int depth, Type t) {
    if (depth <= 0 || pick(3) == 0) {
      switch (pick(6)) {
      case 0:
      case 1:
        return castTo(q, t);
      case 2:
      case 3:
        return castTo(kv, t);
      case 4:
        return castTo(pick(2) ? Value(n) : Value(p), t);
      default:
        return constant(t);
      }
    }
    auto sub = [&] { return integer(depth - 1, t); };
    switch (pick(14)) {
    case 0:
    case 1:
      return arith::AddIOp::create(b, loc, sub(), sub());
    case 2:
    case 3:
      return arith::SubIOp::create(b, loc, sub(), sub());
    case 4: // a scaling, or (refused) a product of two values
      return arith::MulIOp::create(b, loc, sub(),
                                   pick(4) ? constant(t) : sub());
    case 5:
      return arith::SelectOp::create(b, loc, boolean(depth - 1), sub(), sub());
    case 6:
      return arith::MinSIOp::create(b, loc, sub(), sub());
    case 7:
      return arith::MaxSIOp::create(b, loc, sub(), sub());
    case 8:
      return pick(2) ? arith::MinUIOp::create(b, loc, sub(), sub()).getResult()
                     : arith::MaxUIOp::create(b, loc, sub(), sub()).getResult();
    case 9:
      return math::AbsIOp::create(b, loc, sub());
    case 10: { // division and remainder by a constant: not linear
      Value d =
          t.isIndex()
              ? arith::ConstantIndexOp::create(b, loc, 2 + pick(3)).getResult()
              : arith::ConstantIntOp::create(b, loc, t, 2 + pick(3))
                    .getResult();
      switch (pick(3)) {
      case 0:
        return arith::DivSIOp::create(b, loc, sub(), d);
      case 1:
        return arith::RemSIOp::create(b, loc, sub(), d);
      default:
        return arith::FloorDivSIOp::create(b, loc, sub(), d);
      }
    }
    case 11: // an i1 extended
      return castBool(boolean(depth - 1), t);
    default: // through another width
      return castTo(integer(depth - 1, anyIntType()), t);
    }
  }

  Value castBool(Value v, Type t) {
    if (t.isIndex())
      return arith::IndexCastOp::create(
          b, loc, t, arith::ExtUIOp::create(b, loc, b.getI64Type(), v));
    return pick(2) ? arith::ExtSIOp::create(b, loc, t, v).getResult()
                   : arith::ExtUIOp::create(b, loc, t, v).getResult();
  }

  OpBuilder &b;
  Location loc;
  std::mt19937 rng;
  Value q, kv, n, p, f;
};

/// Evaluates the function's ops in order with their fixed-width semantics
/// (index as 64 bits); values are APInts of their type's width.
class Evaluator {
public:
  explicit Evaluator(Block &body) : body(body) {}

  /// Runs the body on the arguments; false where it divides by zero or
  /// overflows a signed division (the point is then skipped).
  bool run(ArrayRef<int64_t> args) {
    values.clear();
    for (auto [arg, v] : llvm::zip(body.getArguments(), args))
      values[arg] = APInt(width(arg.getType()), v, /*isSigned=*/true);
    for (Operation &op : body.without_terminator())
      if (!step(op))
        return false;
    return true;
  }

  const APInt &at(Value v) const { return values.find(v)->second; }

  /// The value as the analysis reads a term: an i1 as 0 or 1, else signed.
  Wide term(Value v) const {
    const APInt &a = at(v);
    return a.getBitWidth() == 1 ? Wide(a.getZExtValue())
                                : Wide(a.getSExtValue());
  }

private:
  static unsigned width(Type t) {
    return t.isIndex() ? 64 : t.getIntOrFloatBitWidth();
  }

  bool step(Operation &op) {
    Value r = op.getResult(0);
    unsigned w = width(r.getType());
    auto in = [&](unsigned i) -> const APInt & { return at(op.getOperand(i)); };
    APInt v;
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      APInt a = cast<IntegerAttr>(c.getValue()).getValue();
      v = a.sextOrTrunc(w);
    } else if (isa<arith::AddIOp>(op)) {
      v = in(0) + in(1);
    } else if (isa<arith::SubIOp>(op)) {
      v = in(0) - in(1);
    } else if (isa<arith::MulIOp>(op)) {
      v = in(0) * in(1);
    } else if (isa<arith::DivSIOp, arith::RemSIOp, arith::FloorDivSIOp>(op)) {
      if (in(1).isZero() || (in(0).isMinSignedValue() && in(1).isAllOnes()))
        return false;
      if (isa<arith::DivSIOp>(op))
        v = in(0).sdiv(in(1));
      else if (isa<arith::RemSIOp>(op))
        v = in(0).srem(in(1));
      else
        v = llvm::APIntOps::RoundingSDiv(in(0), in(1), APInt::Rounding::DOWN);
    } else if (isa<arith::AndIOp>(op)) {
      v = in(0) & in(1);
    } else if (isa<arith::OrIOp>(op)) {
      v = in(0) | in(1);
    } else if (isa<arith::XOrIOp>(op)) {
      v = in(0) ^ in(1);
    } else if (isa<arith::SelectOp>(op)) {
      v = in(0).isOne() ? in(1) : in(2);
    } else if (isa<arith::MinSIOp>(op)) {
      v = in(0).slt(in(1)) ? in(0) : in(1);
    } else if (isa<arith::MaxSIOp>(op)) {
      v = in(0).sgt(in(1)) ? in(0) : in(1);
    } else if (isa<arith::MinUIOp>(op)) {
      v = in(0).ult(in(1)) ? in(0) : in(1);
    } else if (isa<arith::MaxUIOp>(op)) {
      v = in(0).ugt(in(1)) ? in(0) : in(1);
    } else if (isa<math::AbsIOp>(op)) {
      v = in(0).abs();
    } else if (isa<arith::ExtSIOp, arith::IndexCastOp>(op)) {
      v = in(0).sextOrTrunc(w);
    } else if (isa<arith::ExtUIOp, arith::IndexCastUIOp>(op)) {
      v = in(0).zextOrTrunc(w);
    } else if (isa<arith::TruncIOp>(op)) {
      v = in(0).trunc(w);
    } else if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      v = APInt(1, arith::applyCmpPredicate(cmp.getPredicate(), in(0), in(1)));
    } else {
      ADD_FAILURE() << "the evaluator has no rule for "
                    << op.getName().getStringRef().str();
      return false;
    }
    values[r] = v;
    return true;
  }

  Block &body;
  llvm::DenseMap<Value, APInt> values;
};

Wide evalSum(const Evaluator &e, int64_t coefQ, int64_t coefKv,
             ArrayRef<std::pair<Value, int64_t>> terms, int64_t constant,
             int64_t q, int64_t kv) {
  Wide s = Wide(coefQ) * q + Wide(coefKv) * kv + constant;
  for (auto [v, c] : terms)
    s += Wide(c) * e.term(v);
  return s;
}

bool holds(const Evaluator &e, const LinearMask &mask, int64_t q, int64_t kv) {
  return llvm::any_of(mask.pieces, [&](ArrayRef<LinearConstraint> piece) {
    return llvm::all_of(piece, [&](const LinearConstraint &c) {
      Wide s = evalSum(e, c.coefQ, c.coefKv, c.terms, c.constant, q, kv);
      return c.isEquality ? s == 0 : s >= 0;
    });
  });
}

/// [lo, hi) of row q: lo the maximum over groups of each group's minimum, hi
/// the minimum over groups of each group's maximum.
std::pair<Wide, Wide> rowInterval(const Evaluator &e, const KeyInterval &ki,
                                  int64_t q) {
  const Wide inf = Wide(1) << 100;
  auto bound = [&](const AffineBound &a) {
    return evalSum(e, a.coefQ, 0, a.terms, a.constant, q, 0);
  };
  Wide lo = -inf, hi = inf;
  for (const auto &g : ki.lo) {
    Wide m = inf;
    for (const AffineBound &a : g)
      m = std::min(m, bound(a));
    lo = std::max(lo, m);
  }
  for (const auto &g : ki.hi) {
    Wide m = -inf;
    for (const AffineBound &a : g)
      m = std::max(m, bound(a));
    hi = std::min(hi, m);
  }
  return {lo, hi};
}

/// Writes the body's ops again after them, with rewrites that keep each
/// value's meaning: compares swapped or negated, and / or commuted or
/// through De Morgan, sums commuted. Only ops over the coordinates are
/// rewritten: the analysis reads values independent of them (a parameter's
/// own expression) as terms, which it does not prove equal.
class Respeller {
public:
  Respeller(OpBuilder &b, Location loc, unsigned seed)
      : b(b), loc(loc), rng(seed) {}

  /// The new spelling of `root`, written at the builder's point.
  Value respell(Block &body, Value root) {
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (Operation *op : ops)
      write(*op);
    return map.lookup(root);
  }

private:
  static arith::CmpIPredicate swapped(arith::CmpIPredicate p) {
    using P = arith::CmpIPredicate;
    switch (p) {
    case P::slt:
      return P::sgt;
    case P::sle:
      return P::sge;
    case P::sgt:
      return P::slt;
    case P::sge:
      return P::sle;
    case P::ult:
      return P::ugt;
    case P::ule:
      return P::uge;
    case P::ugt:
      return P::ult;
    case P::uge:
      return P::ule;
    default:
      return p; // eq, ne
    }
  }

  Value notOf(Value v) {
    return arith::XOrIOp::create(
        b, loc, v, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
  }

  void write(Operation &op) {
    auto in = [&](unsigned i) { return map.lookupOrDefault(op.getOperand(i)); };
    Value r;
    bool i1 = op.getResult(0).getType().isInteger(1);
    bool coordinates = llvm::any_of(op.getOperands(), [&](Value v) {
      auto arg = dyn_cast<BlockArgument>(v);
      return (arg && arg.getArgNumber() < 2) || overCoordinates.count(v);
    });
    if (coordinates)
      overCoordinates.insert(op.getResult(0));
    unsigned choice = coordinates ? rng() % 3 : 0;
    if (auto cmp = dyn_cast<arith::CmpIOp>(op); cmp && choice == 1)
      r = arith::CmpIOp::create(b, loc, swapped(cmp.getPredicate()), in(1),
                                in(0));
    else if (cmp && choice == 2)
      r = notOf(arith::CmpIOp::create(
          b, loc, arith::invertPredicate(cmp.getPredicate()), in(0), in(1)));
    else if (isa<arith::AndIOp, arith::OrIOp>(op) && i1 && choice == 1)
      r = isa<arith::AndIOp>(op)
              ? arith::AndIOp::create(b, loc, in(1), in(0)).getResult()
              : arith::OrIOp::create(b, loc, in(1), in(0)).getResult();
    else if (isa<arith::AndIOp>(op) && i1 && choice == 2)
      r = notOf(arith::OrIOp::create(b, loc, notOf(in(0)), notOf(in(1))));
    else if (isa<arith::OrIOp>(op) && i1 && choice == 2)
      r = notOf(arith::AndIOp::create(b, loc, notOf(in(0)), notOf(in(1))));
    else if (isa<arith::AddIOp>(op) && choice)
      r = arith::AddIOp::create(b, loc, in(1), in(0));
    else
      r = b.clone(op, map)->getResult(0);
    map.map(op.getResult(0), r);
  }

  OpBuilder &b;
  Location loc;
  std::mt19937 rng;
  IRMapping map;
  llvm::DenseSet<Value> overCoordinates;
};

/// What a value computes, whichever ops spell it: arguments by number, ops
/// by name, attributes and operands.
std::string structure(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return "arg" + std::to_string(arg.getArgNumber());
  Operation *op = v.getDefiningOp();
  std::string s;
  llvm::raw_string_ostream os(s);
  os << op->getName() << op->getAttrDictionary() << "(";
  for (Value o : op->getOperands())
    os << structure(o) << ",";
  os << ")";
  return s;
}

/// A key interval as text, its terms by structure.
std::string describe(const KeyInterval &ki) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (const auto &side : {ki.lo, ki.hi}) {
    os << "[";
    for (const auto &group : side) {
      os << "(";
      for (const AffineBound &a : group) {
        os << a.coefQ << "q";
        for (auto [v, c] : a.terms)
          os << " + " << c << "*" << structure(v);
        os << " + " << a.constant << "; ";
      }
      os << ")";
    }
    os << "]";
  }
  return s;
}

/// Values of (n, p, f) for sample `i` of a predicate: small ones, then a
/// size near its limit (2^30), then a parameter near an end of i32.
std::tuple<int64_t, int64_t, int64_t> sampleParameters(std::mt19937 &rng,
                                                       int i) {
  int64_t n = rng() % 24, p = static_cast<int64_t>(rng() % 41) - 20;
  if (i == 2)
    n = (int64_t(1) << 30) - 1 - rng() % 8;
  if (i == 3)
    p = rng() % 2 ? INT32_MAX - rng() % 8 : INT32_MIN + rng() % 8;
  return {n, p, rng() % 2};
}

/// The pairs (q, kv) a predicate is checked at: every pair of a 20 x 20
/// grid, then pairs anywhere below 2^30, the coordinates' limit (near it
/// most often), some of them near the diagonal.
SmallVector<std::pair<int64_t, int64_t>> samplePoints(std::mt19937 &rng) {
  constexpr int64_t kGrid = 20, kTop = int64_t(1) << 30;
  SmallVector<std::pair<int64_t, int64_t>> points;
  for (int64_t q = 0; q < kGrid; ++q)
    for (int64_t kv = 0; kv < kGrid; ++kv)
      points.push_back({q, kv});
  auto far = [&] {
    return rng() % 2 ? kTop - 1 - int64_t(rng() % 64) : int64_t(rng() % kTop);
  };
  for (int i = 0; i < 64; ++i) {
    int64_t q = far();
    points.push_back({q, far()});
    points.push_back({q, std::max<int64_t>(0, q - rng() % 8)});
  }
  return points;
}

/// 1500 predicates a test; CUIR_MASK_ANALYSIS_CASES=N runs more (a longer
/// search, by hand).
unsigned casesToRun() {
  const char *more = std::getenv("CUIR_MASK_ANALYSIS_CASES");
  return more ? std::max(1, std::atoi(more)) : 1500;
}

class MaskAnalysisTest : public ::testing::Test {
protected:
  MaskAnalysisTest() : b(&context), loc(b.getUnknownLoc()) {
    context.loadDialect<arith::ArithDialect, func::FuncDialect,
                        math::MathDialect>();
  }

  /// A new module holding one empty function of the Generator's arguments;
  /// the builder is left in its body.
  Block &newFunction() {
    module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    Type idx = b.getIndexType();
    fn = func::FuncOp::create(
        b, loc, "mask",
        b.getFunctionType({idx, idx, idx, b.getI32Type(), b.getI1Type()},
                          {b.getI1Type()}));
    Block &body = *fn.addEntryBlock();
    b.setInsertionPointToEnd(&body);
    return body;
  }

  MLIRContext context;
  OpBuilder b;
  Location loc;
  OwningOpRef<ModuleOp> module;
  func::FuncOp fn;
};

TEST_F(MaskAnalysisTest, AnswersAreExactOrRefused) {
  const unsigned kCases = casesToRun();
  unsigned linear = 0, intervals = 0, refused = 0;
  std::mt19937 params(7);
  for (unsigned seed = 0; seed < kCases; ++seed) {
    Block &body = newFunction();
    Generator gen(b, loc, body, seed);
    Value visible = gen.boolean(2 + seed % 3);
    func::ReturnOp::create(b, loc, visible);

    Value q = body.getArgument(0), kv = body.getArgument(1);
    std::optional<LinearMask> mask = analyzeLinearMask(visible, q, kv);
    std::optional<KeyInterval> ki = analyzeKeyInterval(visible, q, kv);
    // An interval is a linear mask with more structure.
    if (ki)
      ASSERT_TRUE(mask) << "seed " << seed;
    if (!mask) {
      ++refused;
      continue;
    }
    ++linear;
    intervals += ki.has_value();

    // The predicate and the answer, printed where a check fails.
    auto shown = [&] {
      std::string text;
      llvm::raw_string_ostream os(text);
      fn.print(os);
      os << "\nlinear mask: ";
      printLinearMask(os, *mask, [](raw_ostream &o, Value v) {
        v.printAsOperand(o, OpPrintingFlags());
      });
      return text;
    };
    Evaluator e(body);
    for (int sample = 0; sample < 4; ++sample) {
      int64_t nValue, pValue, flag;
      std::tie(nValue, pValue, flag) = sampleParameters(params, sample);
      for (const std::pair<int64_t, int64_t> &point : samplePoints(params)) {
        int64_t qi = point.first, kvi = point.second;
        if (!e.run({qi, kvi, nValue, pValue, flag}))
          continue;
        bool want = e.at(visible).isOne();
        auto where = [&] {
          return "seed " + std::to_string(seed) +
                 " at q = " + std::to_string(qi) +
                 ", kv = " + std::to_string(kvi) +
                 ", n = " + std::to_string(nValue) +
                 ", p = " + std::to_string(pValue) +
                 ", f = " + std::to_string(flag) + "\n" + shown();
        };
        ASSERT_EQ(holds(e, *mask, qi, kvi), want)
            << "the linear mask differs, " << where();
        if (!ki)
          continue;
        auto [lo, hi] = rowInterval(e, *ki, qi);
        ASSERT_EQ(lo <= kvi && kvi < hi, want)
            << "the key interval differs, " << where();
      }
    }
  }
  std::printf("%u predicates: %u linear (%u one interval a row), %u refused\n",
              kCases, linear, intervals, refused);
  // Not vacuous: many answers were checked, and refusals happened.
  EXPECT_GT(linear, kCases / 4)
      << intervals << " intervals, " << refused << " refused";
  EXPECT_GT(intervals, kCases / 20);
  EXPECT_GT(refused, kCases / 20);
}

TEST_F(MaskAnalysisTest, EquivalentSpellingsGiveOneInterval) {
  const unsigned kCases = casesToRun();
  unsigned compared = 0, onlyOne = 0;
  for (unsigned seed = 0; seed < kCases; ++seed) {
    Block &body = newFunction();
    Generator gen(b, loc, body, seed);
    Value visible = gen.boolean(2 + seed % 3);
    Value q = body.getArgument(0), kv = body.getArgument(1);
    std::optional<KeyInterval> ki = analyzeKeyInterval(visible, q, kv);
    if (!ki)
      continue;
    Respeller respeller(b, loc, seed + 1);
    Value again = respeller.respell(body, visible);
    func::ReturnOp::create(b, loc, visible);
    std::optional<KeyInterval> ki2 = analyzeKeyInterval(again, q, kv);
    if (!ki2) { // refused as too large after the rewrites: allowed, counted
      ++onlyOne;
      continue;
    }
    ++compared;
    std::string text;
    llvm::raw_string_ostream os(text);
    fn.print(os);
    ASSERT_EQ(describe(*ki), describe(*ki2))
        << "seed " << seed << ": two spellings of one mask\n"
        << text;
  }
  std::printf("%u spellings compared, %u refused after the rewrites\n",
              compared, onlyOne);
  EXPECT_GT(compared, kCases / 5);
  EXPECT_LE(onlyOne, compared / 10);
}

} // namespace
