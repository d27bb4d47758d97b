//===- ScoreDerivative.cpp - Derivatives of a variant's score -------------===//
//
// Forward-mode differentiation of a cuir.score_mod body, one sweep per seed:
// the score, then each element the body loads from a float parameter. The
// body is cloned once into the cuir.score_grad and every sweep appends
// tangent ops that read the cloned primal values, so forward values are
// computed once. A null tangent is an exact zero: ops no seed reaches keep no
// tangent and are reused as they are.
//
//===----------------------------------------------------------------------===//

#include "cuir/Transfer/ScoreDerivative.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::cuir;

namespace {

/// Tangent arithmetic at one location. Null operands are zeros, so a zero is
/// never materialised unless a select needs one; constants fold on creation.
class TangentBuilder {
public:
  TangentBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value constant(Type type, double v) {
    return arith::ConstantOp::create(b, loc,
                                     cast<TypedAttr>(b.getFloatAttr(type, v)));
  }
  Value add(Value x, Value y) {
    if (!x || !y)
      return x ? x : y;
    return b.createOrFold<arith::AddFOp>(loc, x, y);
  }
  Value sub(Value x, Value y) {
    if (!y)
      return x;
    return x ? b.createOrFold<arith::SubFOp>(loc, x, y) : neg(y);
  }
  Value neg(Value x) {
    return x ? b.createOrFold<arith::NegFOp>(loc, x) : Value();
  }
  /// `x * t`, for a tangent `t`: on the right, where `x * 1` folds to `x`.
  Value mul(Value t, Value x) {
    return t && x ? b.createOrFold<arith::MulFOp>(loc, x, t) : Value();
  }
  Value mul(Value t, double c) {
    return t ? mul(t, constant(t.getType(), c)) : Value();
  }
  Value div(Value t, Value x) {
    return t ? b.createOrFold<arith::DivFOp>(loc, t, x) : Value();
  }
  /// `cond ? x : y` of two tangents of type `type`.
  Value select(Value cond, Value x, Value y, Type type) {
    if (!x && !y)
      return {};
    return b.createOrFold<arith::SelectOp>(loc, cond, x ? x : constant(type, 0),
                                           y ? y : constant(type, 0));
  }
  Value cmp(arith::CmpFPredicate pred, Value x, Value y) {
    return b.createOrFold<arith::CmpFOp>(loc, pred, x, y);
  }
  template <typename OpTy, typename... Args> Value op(Args &&...args) {
    return b.createOrFold<OpTy>(loc, std::forward<Args>(args)...);
  }

private:
  OpBuilder &b;
  Location loc;
};

/// The result of a rule: a tangent (null for zero) or a refusal.
using Rule = FailureOr<Value>;

/// One forward-mode sweep over a block, with respect to one seed value.
class Sweep {
public:
  Sweep(OpBuilder &b, Value seed, std::string seedName)
      : b(b), seed(seed), seedName(std::move(seedName)) {}

  /// Appends the tangent ops at the builder's insertion point and returns
  /// the tangent of `output` (null: zero), or fails with a diagnostic.
  FailureOr<Value> run(ArrayRef<Operation *> primal, Value output);

private:
  LogicalResult visit(Operation *op);
  Rule arithRule(Operation *op, TangentBuilder &tb);
  Rule mathRule(Operation *op, TangentBuilder &tb);
  Rule powRule(math::PowFOp op, TangentBuilder &tb);
  Rule refuse(Operation *op, const Twine &why);
  Rule refuseUnknown(Operation *op);
  bool reaches(Operation *op);
  Value t(Value v) { return tangents.lookup(v); }

  OpBuilder &b;
  Value seed;
  std::string seedName;
  DenseMap<Value, Value> tangents;
};

} // namespace

Rule Sweep::refuse(Operation *op, const Twine &why) {
  InFlightDiagnostic diag = op->emitError()
                            << "cannot differentiate " << op->getName()
                            << " with respect to " << seedName << ": " << why;
  if (Operation *load = seed.getDefiningOp())
    diag.attachNote(load->getLoc()) << "the element is loaded here";
  return failure();
}

/// Whether the seed reaches `op`: an operand, or a value its regions use,
/// has a tangent, or the seed is defined inside it.
bool Sweep::reaches(Operation *op) {
  auto hasTangent = [&](Value v) { return tangents.contains(v); };
  if (llvm::any_of(op->getOperands(), hasTangent))
    return true;
  if (op->getNumRegions() == 0)
    return false;
  if (op->isAncestor(seed.getParentBlock()->getParentOp()))
    return true;
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(op->getRegions(), used);
  return llvm::any_of(used, hasTangent);
}

LogicalResult Sweep::visit(Operation *op) {
  if (!reaches(op))
    return success();
  if (op->getNumRegions() > 0)
    return refuse(op, "control flow is not differentiated; the value reaches "
                      "its regions");
  TangentBuilder tb(b, op->getLoc());
  Rule tangent = arithRule(op, tb);
  if (failed(tangent))
    return failure();
  if (*tangent)
    tangents[op->getResult(0)] = *tangent;
  return success();
}

FailureOr<Value> Sweep::run(ArrayRef<Operation *> primal, Value output) {
  TangentBuilder tb(b, seed.getLoc());
  tangents[seed] = tb.constant(seed.getType(), 1.0);
  for (Operation *op : primal)
    if (failed(visit(op)))
      return failure();
  return t(output);
}

/// The derivative flows to the operand the primal selected: the first when
/// the result equals it, so ties (including -0 == +0) go to the first.
template <typename OpTy>
static Value selectedTangent(OpTy op, Value tl, Value tr, TangentBuilder &tb) {
  if (!tl && !tr)
    return {};
  Value first = tb.cmp(arith::CmpFPredicate::OEQ, op.getResult(), op.getLhs());
  return tb.select(first, tl, tr, op.getType());
}

Rule Sweep::arithRule(Operation *op, TangentBuilder &tb) {
  return llvm::TypeSwitch<Operation *, Rule>(op)
      .Case(
          [&](arith::AddFOp o) { return tb.add(t(o.getLhs()), t(o.getRhs())); })
      .Case(
          [&](arith::SubFOp o) { return tb.sub(t(o.getLhs()), t(o.getRhs())); })
      .Case([&](arith::NegFOp o) { return tb.neg(t(o.getOperand())); })
      .Case([&](arith::MulFOp o) {
        return tb.add(tb.mul(t(o.getLhs()), o.getRhs()),
                      tb.mul(t(o.getRhs()), o.getLhs()));
      })
      .Case([&](arith::DivFOp o) {
        // (ta - r tb) / b, with r = a / b the primal quotient.
        Value num = tb.sub(t(o.getLhs()), tb.mul(t(o.getRhs()), o.getResult()));
        return tb.div(num, o.getRhs());
      })
      .Case<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
            arith::MinNumFOp>([&](auto o) -> Value {
        return selectedTangent(o, t(o.getLhs()), t(o.getRhs()), tb);
      })
      .Case([&](arith::SelectOp o) {
        return tb.select(o.getCondition(), t(o.getTrueValue()),
                         t(o.getFalseValue()), o.getType());
      })
      .Case([&](arith::CmpFOp) { return Value(); })
      .Case<arith::ExtFOp, arith::TruncFOp>([&](auto o) {
        // Pass-through: the cast of the tangent (straight through rounding).
        return Value(tb.op<decltype(o)>(o.getType(), t(o.getIn())));
      })
      // An integer conversion is a step function: 0, as torch's autograd
      // (integer tensors carry no gradient), like the compares above.
      .Case<arith::FPToSIOp, arith::FPToUIOp>([&](auto) { return Value(); })
      .Case([&](arith::BitcastOp o) {
        return refuse(o, "it reinterprets the value's bits");
      })
      // fmod(a, b): da - db * trunc(a / b), torch's rule (0 across the jumps,
      // as for floor).
      .Case([&](arith::RemFOp o) -> Value {
        Value tr = t(o.getRhs());
        if (!tr)
          return t(o.getLhs());
        Value quotient =
            tb.op<math::TruncOp>(tb.op<arith::DivFOp>(o.getLhs(), o.getRhs()));
        return tb.sub(t(o.getLhs()), tb.mul(tr, quotient));
      })
      .Default([&](Operation *o) { return mathRule(o, tb); });
}

Rule Sweep::mathRule(Operation *op, TangentBuilder &tb) {
  auto one = [&](Value like) { return tb.constant(like.getType(), 1.0); };
  return llvm::TypeSwitch<Operation *, Rule>(op)
      .Case([&](math::TanhOp o) {
        Value r = o.getResult(); // 1 - tanh^2, from the primal tanh
        return tb.mul(t(o.getOperand()),
                      tb.op<arith::SubFOp>(one(r), tb.op<arith::MulFOp>(r, r)));
      })
      .Case([&](math::ExpOp o) {
        return tb.mul(t(o.getOperand()), o.getResult());
      })
      .Case([&](math::Exp2Op o) {
        return tb.mul(tb.mul(t(o.getOperand()), o.getResult()), M_LN2);
      })
      .Case([&](math::LogOp o) {
        return tb.div(t(o.getOperand()), o.getOperand());
      })
      .Case([&](math::Log2Op o) {
        return tb.div(t(o.getOperand()), tb.mul(o.getOperand(), M_LN2));
      })
      .Case([&](math::Log10Op o) {
        return tb.div(t(o.getOperand()), tb.mul(o.getOperand(), M_LN10));
      })
      .Case([&](math::ExpM1Op o) {
        Value r = o.getResult(); // exp(x) = expm1(x) + 1, from the primal
        return tb.mul(t(o.getOperand()), tb.op<arith::AddFOp>(r, one(r)));
      })
      .Case([&](math::Log1pOp o) {
        Value x = o.getOperand();
        return tb.div(t(x), tb.op<arith::AddFOp>(one(x), x));
      })
      .Case([&](math::SqrtOp o) {
        return tb.div(tb.mul(t(o.getOperand()), 0.5), o.getResult());
      })
      .Case([&](math::RsqrtOp o) {
        Value r = o.getResult(); // -x^(-3/2) / 2 = -r^3 / 2
        Value r3 = tb.op<arith::MulFOp>(r, tb.op<arith::MulFOp>(r, r));
        return tb.mul(tb.mul(t(o.getOperand()), r3), -0.5);
      })
      .Case([&](math::AbsFOp o) {
        // sign(x) with the subgradient 0 at x = 0 (as torch.sign).
        Value x = o.getOperand(), zero = tb.constant(x.getType(), 0.0);
        Value below = tb.select(tb.cmp(arith::CmpFPredicate::OLT, x, zero),
                                tb.neg(t(x)), Value(), x.getType());
        return tb.select(tb.cmp(arith::CmpFPredicate::OGT, x, zero), t(x),
                         below, x.getType());
      })
      .Case([&](math::SinOp o) {
        return tb.mul(t(o.getOperand()), tb.op<math::CosOp>(o.getOperand()));
      })
      .Case([&](math::CosOp o) {
        return tb.neg(
            tb.mul(t(o.getOperand()), tb.op<math::SinOp>(o.getOperand())));
      })
      .Case([&](math::ErfOp o) {
        Value x = o.getOperand(); // 2 / sqrt(pi) exp(-x^2)
        Value g = tb.op<math::ExpOp>(
            tb.op<arith::NegFOp>(tb.op<arith::MulFOp>(x, x)));
        return tb.mul(tb.mul(t(x), g), M_2_SQRTPI);
      })
      .Case([&](math::FmaOp o) {
        return tb.add(tb.add(tb.mul(t(o.getA()), o.getB()),
                             tb.mul(t(o.getB()), o.getA())),
                      t(o.getC()));
      })
      .Case([&](math::PowFOp o) { return powRule(o, tb); })
      .Case<math::IsNaNOp, math::IsInfOp, math::IsFiniteOp>(
          [&](Operation *) { return Value(); })
      // Piecewise constant: torch's autograd gives 0 everywhere, the jumps
      // included (as a compare's select of two constants does here).
      .Case<math::FloorOp, math::CeilOp, math::RoundOp, math::RoundEvenOp,
            math::TruncOp>([&](Operation *) { return Value(); })
      .Default([&](Operation *o) { return refuseUnknown(o); });
}

Rule Sweep::refuseUnknown(Operation *op) {
  if (isa<math::CopySignOp>(op))
    return refuse(op, "no rule (it jumps where the sign operand crosses zero "
                      "and has a kink where the magnitude does)");
  if (llvm::none_of(op->getResultTypes(), llvm::IsaPred<FloatType>))
    return refuse(op, "its non-float result depends on the value");
  return refuse(op, "no derivative rule for this op");
}

/// `x^e` for a constant `e`, without an op where `e` is 0 or 1.
static Value powConstant(Value x, double e, TangentBuilder &tb) {
  if (e == 1.0)
    return x;
  return tb.op<math::PowFOp>(x, tb.constant(x.getType(), e));
}

Rule Sweep::powRule(math::PowFOp o, TangentBuilder &tb) {
  Value x = o.getLhs(), y = o.getRhs();
  Type type = o.getType();
  Value dy;
  if (Value ty = t(y)) {
    // x^y ln x is exact only where ln x is: a positive constant base.
    FloatAttr base;
    if (!matchPattern(x, m_Constant(&base)) || !(base.getValueAsDouble() > 0))
      return refuse(o, "the exponent varies and the base is not a positive "
                       "constant (x^y ln x needs x > 0)");
    dy = tb.mul(tb.mul(ty, o.getResult()), std::log(base.getValueAsDouble()));
  }
  Value tx = t(x);
  if (!tx)
    return dy;
  FloatAttr exponent;
  if (matchPattern(y, m_Constant(&exponent))) {
    double e = exponent.getValueAsDouble(); // e x^(e-1); x^0 is constant
    if (e == 0.0)
      return dy;
    Value dx = e == 1.0 ? tx : tb.mul(tx, powConstant(x, e - 1.0, tb));
    return tb.add(tb.mul(dx, e), dy);
  }
  // y x^(y-1), and 0 where y == 0 (x^0 is 1 even at x = 0).
  Value ym1 = tb.op<arith::SubFOp>(y, tb.constant(type, 1.0));
  Value d = tb.op<arith::MulFOp>(y, tb.op<math::PowFOp>(x, ym1));
  Value isZero = tb.cmp(arith::CmpFPredicate::OEQ, y, tb.constant(type, 0.0));
  return tb.add(tb.mul(tx, tb.select(isZero, Value(), d, type)), dy);
}

//===----------------------------------------------------------------------===//
// Building the cuir.score_grad
//===----------------------------------------------------------------------===//

/// How a diagnostic names the seed `v` of a sweep.
static std::string describeSeed(Value v, VariantOp variant) {
  auto load = v.getDefiningOp<memref::LoadOp>();
  if (!load)
    return "the score";
  unsigned arg = cast<BlockArgument>(load.getMemRef()).getArgNumber();
  return ("an element of parameter '" + variant.getParamName(arg) + "'").str();
}

/// Differentiates the cloned score_mod body of `grad` (ending in its
/// cuir.yield) and replaces the yield by the cuir.grad_yield.
static LogicalResult deriveBody(ScoreGradOp grad, VariantOp variant) {
  Block &body = grad.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  Value out = yield.getValues()[0];
  SmallVector<Operation *> primal = llvm::map_to_vector(
      body.without_terminator(), [](Operation &op) { return &op; });
  SmallVector<Value> seeds{body.getArgument(0)};
  for (memref::LoadOp load : grad.getParamLoads())
    seeds.push_back(load.getResult());
  auto b = OpBuilder::atBlockTerminator(&body);
  SmallVector<Value> derivatives;
  for (Value seed : seeds) {
    Sweep sweep(b, seed, describeSeed(seed, variant));
    FailureOr<Value> d = sweep.run(primal, out);
    if (failed(d))
      return failure();
    derivatives.push_back(
        *d ? *d
           : TangentBuilder(b, yield.getLoc()).constant(out.getType(), 0.0));
  }
  GradYieldOp::create(b, yield.getLoc(), out, derivatives.front(),
                      ArrayRef(seeds).drop_front(),
                      ArrayRef(derivatives).drop_front());
  yield.erase();
  return success();
}

FailureOr<ScoreGradOp> cuir::differentiateScoreMod(VariantOp variant) {
  ScoreModOp mod = variant.getScoreMod();
  if (!mod)
    return ScoreGradOp();
  ScoreGradOp old = variant.getScoreGrad();
  OpBuilder b(mod);
  b.setInsertionPointAfter(mod);
  auto grad = ScoreGradOp::create(b, mod.getLoc());
  IRMapping map;
  mod.getBody().cloneInto(&grad.getBody(), map);
  if (failed(deriveBody(grad, variant))) {
    grad.erase();
    return failure();
  }
  if (old)
    old.erase();
  // Sweeps repeat factors (1 - t*t, a comparison of a max); share them.
  IRRewriter rewriter(grad->getContext());
  DominanceInfo dom(grad);
  eliminateCommonSubExpressions(rewriter, dom, grad);
  return grad;
}
