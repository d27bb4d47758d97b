//===- ArithOps.cpp - arith, math and tensor ops on tiles -----------------===//
//
// Element-wise ops apply to scalars and tiles alike; a scalar operand is
// broadcast over a tile. Results are rounded to their element type, so bf16
// and f16 arithmetic is what the kernel would compute.
//
//===----------------------------------------------------------------------===//

#include "Machine.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::cuir;
using namespace mlir::cuir::interp;

namespace {

Type elementTypeOf(Type t) {
  if (auto shaped = dyn_cast<ShapedType>(t))
    return shaped.getElementType();
  return t;
}

/// The shape of the broadcast of `tiles`: all non-scalars must agree.
FailureOr<SmallVector<int64_t, 2>> broadcastShape(Operation *op,
                                                  ArrayRef<const Tile *> tiles) {
  SmallVector<int64_t, 2> shape;
  bool have = false;
  for (const Tile *t : tiles) {
    if (t->isScalar())
      continue;
    if (have && ArrayRef<int64_t>(shape) != ArrayRef<int64_t>(t->shape)) {
      op->emitError() << "operands have different tile shapes";
      return failure();
    }
    shape = t->shape;
    have = true;
  }
  return shape;
}

Tile makeResult(Type resultType, ArrayRef<int64_t> shape) {
  Type elt = elementTypeOf(resultType);
  ElemKind kind = getElemKind(elt);
  if (kind == ElemKind::Int)
    return Tile::ints(getIntWidth(elt), shape);
  return Tile::floats(kind, shape);
}

/// Computes a float result from float operands.
template <typename F>
FailureOr<Tile> mapFloat(Operation *op, ArrayRef<Tile> in, F fn) {
  SmallVector<const Tile *> ptrs;
  for (const Tile &t : in) {
    if (!t.isFloat()) {
      op->emitError() << "expects float operands";
      return failure();
    }
    ptrs.push_back(&t);
  }
  auto shape = broadcastShape(op, ptrs);
  if (failed(shape))
    return failure();
  Tile out = makeResult(op->getResult(0).getType(), *shape);
  int64_t n = out.numElements();
  float *dst = out.f->data();
  ElemKind kind = out.kind;
  float args[3];
  for (int64_t i = 0; i < n; ++i) {
    for (size_t a = 0; a < in.size(); ++a)
      args[a] = in[a].getF(i);
    dst[i] = roundTo(kind, fn(args));
  }
  return out;
}

/// Computes an integer result from integer operands (index/iN, as int64_t).
template <typename F>
FailureOr<Tile> mapInt(Operation *op, ArrayRef<Tile> in, F fn) {
  SmallVector<const Tile *> ptrs;
  for (const Tile &t : in) {
    if (t.isFloat()) {
      op->emitError() << "expects integer operands";
      return failure();
    }
    ptrs.push_back(&t);
  }
  auto shape = broadcastShape(op, ptrs);
  if (failed(shape))
    return failure();
  Tile out = makeResult(op->getResult(0).getType(), *shape);
  int64_t n = out.numElements();
  unsigned width = in.empty() ? 64 : in[0].width;
  for (int64_t i = 0; i < n; ++i) {
    int64_t a = in[0].getI(i);
    int64_t b = in.size() > 1 ? in[1].getI(i) : 0;
    (*out.i)[i] = wrapInt(fn(a, b, width), out.width);
  }
  return out;
}

uint64_t asUnsigned(int64_t x, unsigned width) {
  if (width >= 64)
    return uint64_t(x);
  return uint64_t(x) & ((uint64_t(1) << width) - 1);
}

bool cmpF(arith::CmpFPredicate p, float a, float b) {
  bool unord = std::isnan(a) || std::isnan(b);
  using P = arith::CmpFPredicate;
  switch (p) {
  case P::AlwaysFalse:
    return false;
  case P::OEQ:
    return !unord && a == b;
  case P::OGT:
    return !unord && a > b;
  case P::OGE:
    return !unord && a >= b;
  case P::OLT:
    return !unord && a < b;
  case P::OLE:
    return !unord && a <= b;
  case P::ONE:
    return !unord && a != b;
  case P::ORD:
    return !unord;
  case P::UEQ:
    return unord || a == b;
  case P::UGT:
    return unord || a > b;
  case P::UGE:
    return unord || a >= b;
  case P::ULT:
    return unord || a < b;
  case P::ULE:
    return unord || a <= b;
  case P::UNE:
    return unord || a != b;
  case P::UNO:
    return unord;
  case P::AlwaysTrue:
    return true;
  }
  return false;
}

/// The signed value of a `width`-bit integer as stored (i1 holds 0 or 1;
/// signed, true is -1).
int64_t signedValue(int64_t x, unsigned width) { return width == 1 ? -x : x; }

bool cmpI(arith::CmpIPredicate p, int64_t a, int64_t b, unsigned w) {
  using P = arith::CmpIPredicate;
  uint64_t ua = asUnsigned(a, w), ub = asUnsigned(b, w);
  a = signedValue(a, w);
  b = signedValue(b, w);
  switch (p) {
  case P::eq:
    return a == b;
  case P::ne:
    return a != b;
  case P::slt:
    return a < b;
  case P::sle:
    return a <= b;
  case P::sgt:
    return a > b;
  case P::sge:
    return a >= b;
  case P::ult:
    return ua < ub;
  case P::ule:
    return ua <= ub;
  case P::ugt:
    return ua > ub;
  case P::uge:
    return ua >= ub;
  }
  return false;
}

// Two's complement arithmetic on int64_t, without C++'s undefined cases:
// sums and products wrap, INT64_MIN / -1 wraps (the CPU would trap), and a
// shift by the width or more gives what shifting bit by bit would.
int64_t wrapAdd(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) + uint64_t(b));
}

int64_t wrapSub(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) - uint64_t(b));
}

int64_t wrapMul(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) * uint64_t(b));
}

bool overflowsDivision(int64_t a, int64_t b) {
  return b == -1 && a == std::numeric_limits<int64_t>::min();
}

int64_t divSigned(int64_t a, int64_t b) {
  return overflowsDivision(a, b) ? a : a / b;
}

int64_t remSigned(int64_t a, int64_t b) {
  return overflowsDivision(a, b) ? 0 : a % b;
}

int64_t shiftLeft(int64_t a, int64_t b, unsigned width) {
  return b < 0 || b >= int64_t(width) ? 0 : int64_t(uint64_t(a) << b);
}

int64_t shiftRightSigned(int64_t a, int64_t b, unsigned width) {
  if (b < 0 || b >= int64_t(width))
    return a < 0 ? -1 : 0;
  return a >> b;
}

uint64_t shiftRightUnsigned(uint64_t a, int64_t b, unsigned width) {
  return b < 0 || b >= int64_t(width) ? 0 : a >> b;
}

/// fptosi of a value out of range is poison; C++'s conversion would be
/// undefined, so saturate to the `width`-bit range (NaN: 0), as the GPU's
/// cvt.rzi does and the lowering writes it.
int64_t truncateToInt(float f, unsigned width) {
  if (std::isnan(f))
    return 0;
  if (width <= 1)
    return f <= -1.0f ? 1 : 0; // i1: -1 (true) or 0
  double bound = std::ldexp(1.0, width - 1);
  if (double(f) >= bound)
    return int64_t(uint64_t(bound) - 1);
  if (double(f) < -bound)
    return -int64_t(uint64_t(bound) - 1) - 1;
  return int64_t(f);
}


int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = divSigned(a, b);
  return (remSigned(a, b) != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t ceilDiv(int64_t a, int64_t b) {
  int64_t q = divSigned(a, b);
  return (remSigned(a, b) != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

} // namespace

/// Materialises an arith.constant.
static FailureOr<Tile> constantTile(Operation *op, Attribute value, Type type) {
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    auto shaped = cast<ShapedType>(type);
    Tile t = makeResult(type, shaped.getShape());
    if (t.isFloat()) {
      if (dense.isSplat()) {
        float v = dense.getSplatValue<APFloat>().convertToFloat();
        std::fill(t.f->begin(), t.f->end(), roundTo(t.kind, v));
      } else {
        int64_t i = 0;
        for (APFloat v : dense.getValues<APFloat>())
          (*t.f)[i++] = roundTo(t.kind, v.convertToFloat());
      }
    } else {
      if (dense.isSplat()) {
        int64_t v = dense.getSplatValue<APInt>().getSExtValue();
        std::fill(t.i->begin(), t.i->end(), wrapInt(v, t.width));
      } else {
        int64_t i = 0;
        for (APInt v : dense.getValues<APInt>())
          (*t.i)[i++] = wrapInt(v.getSExtValue(), t.width);
      }
    }
    return t;
  }
  if (auto f = dyn_cast<FloatAttr>(value))
    return Tile::scalarF(getElemKind(type), f.getValue().convertToFloat());
  if (auto i = dyn_cast<IntegerAttr>(value))
    return Tile::scalarI(getIntWidth(type), i.getValue().getSExtValue());
  op->emitError() << "unsupported constant " << value;
  return failure();
}

/// An op's result, or std::nullopt when the op is not of the family asked.
using FamilyResult = std::optional<FailureOr<Tile>>;

/// Float ops that map elements alike.
static FamilyResult floatElementwise(Operation *op, ArrayRef<Tile> in) {
  auto fl = [&](auto fn) -> FamilyResult {
    return FamilyResult(std::in_place, mapFloat(op, in, fn));
  };
  return llvm::TypeSwitch<Operation *, FamilyResult>(op)
      .Case([&](arith::AddFOp) {
        return fl([](float *a) { return a[0] + a[1]; });
      })
      .Case([&](arith::SubFOp) {
        return fl([](float *a) { return a[0] - a[1]; });
      })
      .Case([&](arith::MulFOp) {
        return fl([](float *a) { return a[0] * a[1]; });
      })
      .Case([&](arith::DivFOp) {
        return fl([](float *a) { return a[0] / a[1]; });
      })
      .Case([&](arith::RemFOp) {
        return fl([](float *a) { return std::fmod(a[0], a[1]); });
      })
      .Case([&](arith::NegFOp) { return fl([](float *a) { return -a[0]; }); })
      .Case([&](arith::MaximumFOp) {
        return fl([](float *a) {
          return (std::isnan(a[0]) || std::isnan(a[1])) ? NAN : std::fmax(a[0], a[1]);
        });
      })
      .Case([&](arith::MinimumFOp) {
        return fl([](float *a) {
          return (std::isnan(a[0]) || std::isnan(a[1])) ? NAN : std::fmin(a[0], a[1]);
        });
      })
      .Case([&](arith::MaxNumFOp) {
        return fl([](float *a) { return std::fmax(a[0], a[1]); });
      })
      .Case([&](arith::MinNumFOp) {
        return fl([](float *a) { return std::fmin(a[0], a[1]); });
      })
      .Case([&](math::ExpOp) {
        return fl([](float *a) { return std::exp(a[0]); });
      })
      .Case([&](math::Exp2Op) {
        return fl([](float *a) { return std::exp2(a[0]); });
      })
      .Case([&](math::LogOp) {
        return fl([](float *a) { return std::log(a[0]); });
      })
      .Case([&](math::Log2Op) {
        return fl([](float *a) { return std::log2(a[0]); });
      })
      .Case([&](math::Log1pOp) {
        return fl([](float *a) { return std::log1p(a[0]); });
      })
      .Case([&](math::ExpM1Op) {
        return fl([](float *a) { return std::expm1(a[0]); });
      })
      .Case([&](math::TanhOp) {
        return fl([](float *a) { return std::tanh(a[0]); });
      })
      .Case([&](math::SqrtOp) {
        return fl([](float *a) { return std::sqrt(a[0]); });
      })
      .Case([&](math::RsqrtOp) {
        return fl([](float *a) { return 1.0f / std::sqrt(a[0]); });
      })
      .Case([&](math::AbsFOp) {
        return fl([](float *a) { return std::fabs(a[0]); });
      })
      .Case([&](math::ErfOp) {
        return fl([](float *a) { return std::erf(a[0]); });
      })
      .Case([&](math::FloorOp) {
        return fl([](float *a) { return std::floor(a[0]); });
      })
      .Case([&](math::CeilOp) {
        return fl([](float *a) { return std::ceil(a[0]); });
      })
      .Case([&](math::TruncOp) {
        return fl([](float *a) { return std::trunc(a[0]); });
      })
      .Case([&](math::RoundEvenOp) {
        return fl([](float *a) { return std::nearbyint(a[0]); });
      })
      .Case([&](math::SinOp) {
        return fl([](float *a) { return std::sin(a[0]); });
      })
      .Case([&](math::CosOp) {
        return fl([](float *a) { return std::cos(a[0]); });
      })
      .Case([&](math::PowFOp) {
        return fl([](float *a) { return std::pow(a[0], a[1]); });
      })
      .Case([&](math::FmaOp) {
        return fl([](float *a) { return std::fma(a[0], a[1], a[2]); });
      })
      .Case([&](math::CopySignOp) {
        return fl([](float *a) { return std::copysign(a[0], a[1]); });
      })
      .Case([&](arith::TruncFOp) { return fl([](float *a) { return a[0]; }); })
      .Case([&](arith::ExtFOp) { return fl([](float *a) { return a[0]; }); })
      .Default([](Operation *) { return std::nullopt; });
}

/// Integer ops that map elements alike and cannot fail on a value.
static FamilyResult intElementwise(Operation *op, ArrayRef<Tile> in) {
  auto it = [&](auto fn) -> FamilyResult {
    return FamilyResult(std::in_place, mapInt(op, in, fn));
  };
  return llvm::TypeSwitch<Operation *, FamilyResult>(op)
      .Case([&](arith::AddIOp) { return it([](int64_t a, int64_t b, unsigned) { return wrapAdd(a, b); }); })
      .Case([&](arith::SubIOp) { return it([](int64_t a, int64_t b, unsigned) { return wrapSub(a, b); }); })
      .Case([&](arith::MulIOp) { return it([](int64_t a, int64_t b, unsigned) { return wrapMul(a, b); }); })
      .Case([&](arith::AndIOp) { return it([](int64_t a, int64_t b, unsigned) { return a & b; }); })
      .Case([&](arith::OrIOp) { return it([](int64_t a, int64_t b, unsigned) { return a | b; }); })
      .Case([&](arith::XOrIOp) { return it([](int64_t a, int64_t b, unsigned) { return a ^ b; }); })
      .Case([&](arith::ShLIOp) { return it([](int64_t a, int64_t b, unsigned w) { return shiftLeft(a, b, w); }); })
      .Case([&](arith::ShRSIOp) { return it([](int64_t a, int64_t b, unsigned w) { return shiftRightSigned(a, b, w); }); })
      .Case([&](arith::ShRUIOp) {
        return it([](int64_t a, int64_t b, unsigned w) { return int64_t(shiftRightUnsigned(asUnsigned(a, w), b, w)); });
      })
      .Case([&](arith::MinSIOp) { return it([](int64_t a, int64_t b, unsigned) { return std::min(a, b); }); })
      .Case([&](arith::MaxSIOp) { return it([](int64_t a, int64_t b, unsigned) { return std::max(a, b); }); })
      .Case([&](arith::MinUIOp) {
        return it([](int64_t a, int64_t b, unsigned w) { return asUnsigned(a, w) < asUnsigned(b, w) ? a : b; });
      })
      .Case([&](arith::MaxUIOp) {
        return it([](int64_t a, int64_t b, unsigned w) { return asUnsigned(a, w) > asUnsigned(b, w) ? a : b; });
      })
      .Case([&](arith::IndexCastOp) { return it([](int64_t a, int64_t, unsigned w) { return signedValue(a, w); }); })
      .Case([&](arith::IndexCastUIOp) {
        return it([](int64_t a, int64_t, unsigned w) { return int64_t(asUnsigned(a, w)); });
      })
      .Case([&](arith::ExtSIOp) { return it([](int64_t a, int64_t, unsigned w) { return signedValue(a, w); }); })
      .Case([&](math::AbsIOp) {
        return it([](int64_t a, int64_t, unsigned) { return a < 0 ? wrapSub(0, a) : a; });
      })
      .Case([&](arith::ExtUIOp) {
        return it([](int64_t a, int64_t, unsigned w) { return int64_t(asUnsigned(a, w)); });
      })
      .Case([&](arith::TruncIOp) { return it([](int64_t a, int64_t, unsigned) { return a; }); })
      .Default([](Operation *) { return std::nullopt; });
}

/// Integer division-like ops: an error on a zero divisor.
static FamilyResult intDivision(Operation *op, ArrayRef<Tile> in) {
  bool divByZero = false;
  auto div = [&](auto fn) -> FamilyResult {
    return FamilyResult(
        std::in_place, mapInt(op, in, [&](int64_t a, int64_t b, unsigned w) {
          if (b == 0) {
            divByZero = true;
            return int64_t(0);
          }
          return int64_t(fn(a, b, w));
        }));
  };
  FamilyResult result = llvm::TypeSwitch<Operation *, FamilyResult>(op)
      .Case([&](arith::DivSIOp) { return div([](int64_t a, int64_t b, unsigned) { return divSigned(a, b); }); })
      .Case([&](arith::DivUIOp) {
        return div([](int64_t a, int64_t b, unsigned w) { return int64_t(asUnsigned(a, w) / asUnsigned(b, w)); });
      })
      .Case([&](arith::RemSIOp) { return div([](int64_t a, int64_t b, unsigned) { return remSigned(a, b); }); })
      .Case([&](arith::RemUIOp) {
        return div([](int64_t a, int64_t b, unsigned w) { return int64_t(asUnsigned(a, w) % asUnsigned(b, w)); });
      })
      .Case([&](arith::CeilDivSIOp) { return div([](int64_t a, int64_t b, unsigned) { return ceilDiv(a, b); }); })
      .Case([&](arith::CeilDivUIOp) {
        return div([](int64_t a, int64_t b, unsigned w) {
          uint64_t ua = asUnsigned(a, w), ub = asUnsigned(b, w);
          return int64_t(ua / ub + (ua % ub != 0));
        });
      })
      .Case([&](arith::FloorDivSIOp) { return div([](int64_t a, int64_t b, unsigned) { return floorDiv(a, b); }); })
      .Default([](Operation *) { return std::nullopt; });
  if (divByZero)
    return FamilyResult(std::in_place, op->emitError() << "divides by zero");
  return result;
}

static FailureOr<Tile> compareFloats(arith::CmpFOp cmp, ArrayRef<Tile> in) {
  auto shape = broadcastShape(cmp, {&in[0], &in[1]});
  if (failed(shape))
    return failure();
  Tile out = Tile::ints(1, *shape);
  for (int64_t i = 0, n = out.numElements(); i < n; ++i)
    (*out.i)[i] = cmpF(cmp.getPredicate(), in[0].getF(i), in[1].getF(i));
  return out;
}

static FailureOr<Tile> compareInts(arith::CmpIOp cmp, ArrayRef<Tile> in) {
  auto shape = broadcastShape(cmp, {&in[0], &in[1]});
  if (failed(shape))
    return failure();
  Tile out = Tile::ints(1, *shape);
  unsigned w = in[0].width;
  for (int64_t i = 0, n = out.numElements(); i < n; ++i)
    (*out.i)[i] = cmpI(cmp.getPredicate(), in[0].getI(i), in[1].getI(i), w);
  return out;
}

static FailureOr<Tile> selectTiles(arith::SelectOp op, ArrayRef<Tile> in) {
  auto shape = broadcastShape(op, {&in[0], &in[1], &in[2]});
  if (failed(shape))
    return failure();
  Tile out = makeResult(op.getType(), *shape);
  for (int64_t i = 0, n = out.numElements(); i < n; ++i) {
    bool c = in[0].getI(i) & 1;
    if (out.isFloat())
      (*out.f)[i] = c ? in[1].getF(i) : in[2].getF(i);
    else
      (*out.i)[i] = c ? in[1].getI(i) : in[2].getI(i);
  }
  return out;
}

static Tile intToFloat(Operation *op, const Tile &in, bool isUnsigned) {
  Tile out = makeResult(op->getResult(0).getType(), in.shape);
  for (int64_t i = 0, n = out.numElements(); i < n; ++i) {
    int64_t v = in.getI(i);
    float f = isUnsigned ? float(asUnsigned(v, in.width))
                         : float(signedValue(v, in.width));
    (*out.f)[i] = roundTo(out.kind, f);
  }
  return out;
}

static Tile floatToInt(Operation *op, const Tile &in) {
  Tile out = makeResult(op->getResult(0).getType(), in.shape);
  for (int64_t i = 0, n = out.numElements(); i < n; ++i)
    (*out.i)[i] = wrapInt(truncateToInt(in.getF(i), out.width), out.width);
  return out;
}

/// Comparisons, select and int<->float casts: they mix element kinds.
static FamilyResult mixedKinds(Operation *op, ArrayRef<Tile> in) {
  auto some = [](FailureOr<Tile> t) {
    return FamilyResult(std::in_place, std::move(t));
  };
  return llvm::TypeSwitch<Operation *, FamilyResult>(op)
      .Case([&](arith::CmpFOp cmp) { return some(compareFloats(cmp, in)); })
      .Case([&](arith::CmpIOp cmp) { return some(compareInts(cmp, in)); })
      .Case([&](arith::SelectOp sel) { return some(selectTiles(sel, in)); })
      .Case<arith::SIToFPOp, arith::UIToFPOp>([&](auto) {
        return some(intToFloat(op, in[0], isa<arith::UIToFPOp>(op)));
      })
      .Case<arith::FPToSIOp, arith::FPToUIOp>(
          [&](auto) { return some(floatToInt(op, in[0])); })
      .Default([](Operation *) { return std::nullopt; });
}

/// tensor.splat: a tile of one value.
static Tile splatTile(tensor::SplatOp splat, const Tile &in) {
  Tile t = makeResult(splat.getType(), splat.getType().getShape());
  if (t.isFloat())
    std::fill(t.f->begin(), t.f->end(), roundTo(t.kind, in.getF(0)));
  else
    std::fill(t.i->begin(), t.i->end(), wrapInt(in.getI(0), t.width));
  return t;
}

LogicalResult Worker::execArith(Operation *op) {
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    FailureOr<Tile> t = constantTile(op, cst.getValue(), cst.getType());
    if (failed(t))
      return failure();
    set(cst.getResult(), *t);
    return success();
  }
  if (auto splat = dyn_cast<tensor::SplatOp>(op)) {
    FailureOr<Tile> in = getTile(op, splat.getInput());
    if (failed(in))
      return failure();
    set(splat.getResult(), splatTile(splat, *in));
    return success();
  }

  SmallVector<Tile, 3> in;
  for (Value v : op->getOperands()) {
    FailureOr<Tile> t = getTile(op, v);
    if (failed(t))
      return failure();
    in.push_back(*t);
  }
  FamilyResult result = floatElementwise(op, in);
  for (auto family : {intElementwise, intDivision, mixedKinds})
    if (!result)
      result = family(op, in);
  if (!result)
    return op->emitError() << "the CuIR interpreter does not execute '"
                           << op->getName() << "'";
  if (failed(*result))
    return failure();
  set(op->getResult(0), **result);
  return success();
}
