//===- CppEmitter.cpp - CuIR values as expressions of the source ----------===//

#include "cuir/Lower/CppEmitter.h"

#include "cuir/Dialect/CuIR.h"


#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::cuir;

const char *const mlir::cuir::kTanhApproxHelper =
    "// ---- cuir: tanh on the SFU (tanh.approx.f32, sm_75+; relative error "
    "<= 2^-11) ----\n"
    "__device__ __forceinline__ float cuir_tanh_approx(float x) {\n"
    "  float y;\n"
    "  asm(\"tanh.approx.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x));\n"
    "  return y;\n"
    "}\n";

std::optional<std::string> mlir::cuir::sourceNameOf(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto cs = dyn_cast<CallSiteLoc>(loc))
    return sourceNameOf(cs.getCallee());
  return std::nullopt;
}

FailureOr<std::string> CppEmitter::type(Type t) {
  if (t.isIndex() || t.isInteger(32))
    return std::string("int");
  if (t.isInteger(64))
    return std::string("int64_t");
  if (t.isInteger(1))
    return std::string("bool");
  if (t.isF32())
    return std::string("float");
  return failure();
}

static std::string floatLiteral(double v) {
  if (std::isinf(v))
    return v < 0 ? "-INFINITY" : "INFINITY";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  std::string s(buf);
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s + "f";
}

FailureOr<std::string> CppEmitter::expr(Value v, std::string &why) {
  if (auto it = names.find(v); it != names.end())
    return it->second;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (auto kernel = dyn_cast<KernelOp>(owner))
      if (auto name = variantParamName(argRole(kernel, arg.getArgNumber())))
        return paramsName + "." + name->str();
    if (auto name = sourceNameOf(arg.getLoc()))
      return *name;
    why = "a block argument without a source name";
    return failure();
  }
  Operation *op = v.getDefiningOp();
  // An inserted op stands for a Source op: its location is not its name.
  if (!getEnclosingChange(op))
    if (auto name = sourceNameOf(op->getLoc()))
      return *name;
  auto sub = [&](unsigned i) { return expr(op->getOperand(i), why); };
  auto bin = [&](StringRef sym) -> FailureOr<std::string> {
    auto a = sub(0), b = sub(1);
    if (failed(a) || failed(b))
      return failure();
    return "(" + *a + " " + sym.str() + " " + *b + ")";
  };
  auto call = [&](StringRef fn) -> FailureOr<std::string> {
    std::string s = fn.str() + "(";
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      auto a = sub(i);
      if (failed(a))
        return failure();
      s += (i ? ", " : "") + *a;
    }
    return s + ")";
  };
  auto cast = [&](StringRef to) -> FailureOr<std::string> {
    auto a = sub(0);
    if (failed(a))
      return failure();
    // index <-> i32 and friends are the same C++ int: no cast to write.
    if (auto from = type(op->getOperand(0).getType());
        succeeded(from) && *from == to)
      return *a;
    return "static_cast<" + to.str() + ">(" + *a + ")";
  };
  using R = FailureOr<std::string>;
  return llvm::TypeSwitch<Operation *, R>(op)
      .Case([&](arith::ConstantOp c) -> R {
        if (auto f = dyn_cast<FloatAttr>(c.getValue()))
          return floatLiteral(f.getValueAsDouble());
        if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
          if (c.getType().isInteger(1))
            return std::string(i.getInt() ? "true" : "false");
          return std::to_string(i.getInt());
        }
        why = "a non-scalar constant";
        return failure();
      })
      .Case([&](arith::AddIOp) { return bin("+"); })
      .Case([&](arith::SubIOp) { return bin("-"); })
      .Case([&](arith::MulIOp) { return bin("*"); })
      .Case([&](arith::DivSIOp) { return bin("/"); })
      .Case([&](arith::DivUIOp) { return bin("/"); })
      .Case([&](arith::RemSIOp) { return bin("%"); })
      .Case([&](arith::RemUIOp) { return bin("%"); })
      .Case([&](arith::CeilDivSIOp) -> R {
        auto a = sub(0), b = sub(1);
        if (failed(a) || failed(b))
          return failure();
        return "((" + *a + " + " + *b + " - 1) / " + *b + ")";
      })
      .Case([&](arith::CeilDivUIOp) -> R {
        auto a = sub(0), b = sub(1);
        if (failed(a) || failed(b))
          return failure();
        return "((" + *a + " + " + *b + " - 1) / " + *b + ")";
      })
      .Case([&](arith::MinSIOp) { return call("min"); })
      .Case([&](arith::MaxSIOp) { return call("max"); })
      .Case([&](arith::MinUIOp) { return call("min"); })
      .Case([&](arith::MaxUIOp) { return call("max"); })
      .Case([&](arith::AndIOp) { return bin("&&"); })
      .Case([&](arith::OrIOp) { return bin("||"); })
      .Case([&](arith::XOrIOp) { return bin("!="); })
      .Case([&](arith::AddFOp) { return bin("+"); })
      .Case([&](arith::SubFOp) { return bin("-"); })
      .Case([&](arith::MulFOp) { return bin("*"); })
      .Case([&](arith::DivFOp) { return bin("/"); })
      .Case([&](arith::MaximumFOp) { return call("fmaxf"); })
      .Case([&](arith::MinimumFOp) { return call("fminf"); })
      .Case([&](arith::MaxNumFOp) { return call("fmaxf"); })
      .Case([&](arith::MinNumFOp) { return call("fminf"); })
      .Case([&](arith::NegFOp) -> R {
        auto a = sub(0);
        if (failed(a))
          return failure();
        return "(-" + *a + ")";
      })
      .Case([&](math::TanhOp) { return call(kTanhApproxName); })
      .Case([&](math::ExpOp) { return call("__expf"); })
      .Case([&](math::Exp2Op) { return call("exp2f"); })
      .Case([&](math::LogOp) { return call("__logf"); })
      .Case([&](math::Log2Op) { return call("log2f"); })
      .Case([&](math::SqrtOp) { return call("sqrtf"); })
      .Case([&](math::AbsFOp) { return call("fabsf"); })
      .Case([&](math::ErfOp) { return call("erff"); })
      .Case([&](math::FmaOp) { return call("fmaf"); })
      .Case([&](arith::SIToFPOp) { return cast("float"); })
      .Case([&](arith::UIToFPOp) { return cast("float"); })
      .Case([&](arith::FPToSIOp) { return cast("int"); })
      .Case([&](arith::IndexCastOp) { return cast("int"); })
      .Case([&](arith::IndexCastUIOp) { return cast("int"); })
      .Case([&](arith::ExtUIOp) { return cast("int"); })
      .Case([&](arith::ExtSIOp) { return cast("int"); })
      .Case([&](arith::TruncIOp) { return cast("int"); })
      .Case([&](arith::CmpIOp c) -> R {
        static const char *syms[] = {"==", "!=", "<",  "<=", ">",
                                     ">=", "<",  "<=", ">",  ">="};
        return bin(syms[static_cast<int>(c.getPredicate())]);
      })
      .Case([&](arith::CmpFOp c) -> R {
        using P = arith::CmpFPredicate;
        switch (c.getPredicate()) {
        case P::OEQ:
        case P::UEQ:
          return bin("==");
        case P::ONE:
        case P::UNE:
          return bin("!=");
        case P::OLT:
        case P::ULT:
          return bin("<");
        case P::OLE:
        case P::ULE:
          return bin("<=");
        case P::OGT:
        case P::UGT:
          return bin(">");
        case P::OGE:
        case P::UGE:
          return bin(">=");
        default:
          why = "an unordered float comparison";
          return failure();
        }
      })
      .Case([&](arith::SelectOp) -> R {
        auto c = sub(0), a = sub(1), b = sub(2);
        if (failed(c) || failed(a) || failed(b))
          return failure();
        return "(" + *c + " ? " + *a + " : " + *b + ")";
      })
      .Case([&](memref::LoadOp load) -> R {
        auto base = expr(load.getMemRef(), why);
        if (failed(base) || load.getIndices().size() != 1) {
          why = "a load from something other than a 1-D parameter";
          return failure();
        }
        auto i = expr(load.getIndices()[0], why);
        if (failed(i))
          return failure();
        return *base + "[" + *i + "]";
      })
      .Default([&](Operation *o) -> R {
        why = "'" + o->getName().getStringRef().str() +
              "' has no C++ form in the lowering";
        return failure();
      });
}
