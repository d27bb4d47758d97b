//===- CppEmitter.cpp - CuIR values as expressions of the source ----------===//

#include "cuir/Lower/CppEmitter.h"

#include "cuir/Dialect/CuIR.h"


#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

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

namespace {

/// How an op is written in C++.
struct CppForm {
  enum Kind { None, Infix, Call, Cast, CeilDiv, Negate } kind = None;
  StringRef text; // the operator, function or target type
};

/// The form of the ops written by one operator, function or cast.
CppForm formOf(Operation *op) {
  using K = CppForm::Kind;
  return llvm::StringSwitch<CppForm>(op->getName().getStringRef())
                  .Cases({"arith.addi", "arith.addf"}, {K::Infix, "+"})
                  .Cases({"arith.subi", "arith.subf"}, {K::Infix, "-"})
                  .Cases({"arith.muli", "arith.mulf"}, {K::Infix, "*"})
                  .Cases({"arith.divsi", "arith.divui", "arith.divf"},
                         {K::Infix, "/"})
                  .Cases({"arith.remsi", "arith.remui"}, {K::Infix, "%"})
                  .Case("arith.andi", {K::Infix, "&&"})
                  .Case("arith.ori", {K::Infix, "||"})
                  .Case("arith.xori", {K::Infix, "!="})
                  .Cases({"arith.ceildivsi", "arith.ceildivui"},
                         {K::CeilDiv, ""})
                  .Cases({"arith.minsi", "arith.minui"}, {K::Call, "min"})
                  .Cases({"arith.maxsi", "arith.maxui"}, {K::Call, "max"})
                  .Cases({"arith.maximumf", "arith.maxnumf"},
                         {K::Call, "fmaxf"})
                  .Cases({"arith.minimumf", "arith.minnumf"},
                         {K::Call, "fminf"})
                  .Case("arith.negf", {K::Negate, ""})
                  .Case("math.tanh", {K::Call, kTanhApproxName})
                  .Case("math.exp", {K::Call, "__expf"})
                  .Case("math.exp2", {K::Call, "exp2f"})
                  .Case("math.log", {K::Call, "__logf"})
                  .Case("math.log2", {K::Call, "log2f"})
                  .Case("math.sqrt", {K::Call, "sqrtf"})
                  .Case("math.absf", {K::Call, "fabsf"})
                  .Case("math.erf", {K::Call, "erff"})
                  .Case("math.fma", {K::Call, "fmaf"})
                  .Cases({"arith.sitofp", "arith.uitofp"}, {K::Cast, "float"})
                  .Cases({"arith.fptosi", "arith.index_cast",
                          "arith.index_castui", "arith.extui", "arith.extsi",
                          "arith.trunci"},
                         {K::Cast, "int"})
                  .Default({});
}

/// The C++ operator of an integer comparison.
StringRef cmpiSymbol(arith::CmpIPredicate p) {
  static const char *syms[] = {"==", "!=", "<",  "<=", ">",
                               ">=", "<",  "<=", ">",  ">="};
  return syms[static_cast<int>(p)];
}

/// The C++ operator of an ordered or unordered float comparison, or "".
StringRef cmpfSymbol(arith::CmpFPredicate p) {
  using P = arith::CmpFPredicate;
  switch (p) {
  case P::OEQ:
  case P::UEQ:
    return "==";
  case P::ONE:
  case P::UNE:
    return "!=";
  case P::OLT:
  case P::ULT:
    return "<";
  case P::OLE:
  case P::ULE:
    return "<=";
  case P::OGT:
  case P::UGT:
    return ">";
  case P::OGE:
  case P::UGE:
    return ">=";
  default:
    return "";
  }
}

} // namespace

FailureOr<std::string> CppEmitter::argument(BlockArgument arg,
                                            std::string &why) {
  Operation *owner = arg.getOwner()->getParentOp();
  if (auto kernel = dyn_cast<KernelOp>(owner))
    if (auto name = variantParamName(argRole(kernel, arg.getArgNumber())))
      return paramsName + "." + name->str();
  if (auto name = sourceNameOf(arg.getLoc()))
    return *name;
  why = "a block argument without a source name";
  return failure();
}

FailureOr<SmallVector<std::string>> CppEmitter::operands(Operation *op,
                                                         std::string &why) {
  SmallVector<std::string> out;
  for (Value v : op->getOperands()) {
    FailureOr<std::string> e = expr(v, why);
    if (failed(e))
      return failure();
    out.push_back(*e);
  }
  return out;
}

FailureOr<std::string> CppEmitter::constant(arith::ConstantOp c,
                                            std::string &why) {
  if (auto f = dyn_cast<FloatAttr>(c.getValue()))
    return floatLiteral(f.getValueAsDouble());
  if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
    if (c.getType().isInteger(1))
      return std::string(i.getInt() ? "true" : "false");
    return std::to_string(i.getInt());
  }
  why = "a non-scalar constant";
  return failure();
}

FailureOr<std::string> CppEmitter::special(Operation *op, std::string &why) {
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    return constant(c, why);
  FailureOr<SmallVector<std::string>> a = operands(op, why);
  if (failed(a))
    return failure();
  StringRef sym;
  if (auto c = dyn_cast<arith::CmpIOp>(op))
    sym = cmpiSymbol(c.getPredicate());
  else if (auto c = dyn_cast<arith::CmpFOp>(op))
    if ((sym = cmpfSymbol(c.getPredicate())).empty()) {
      why = "an unordered float comparison";
      return failure();
    }
  if (!sym.empty())
    return "(" + (*a)[0] + " " + sym.str() + " " + (*a)[1] + ")";
  if (isa<arith::SelectOp>(op))
    return "(" + (*a)[0] + " ? " + (*a)[1] + " : " + (*a)[2] + ")";
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    if (load.getIndices().size() == 1)
      return (*a)[0] + "[" + (*a)[1] + "]";
    why = "a load from something other than a 1-D parameter";
    return failure();
  }
  why = "'" + op->getName().getStringRef().str() +
        "' has no C++ form in the lowering";
  return failure();
}

FailureOr<std::string> CppEmitter::expr(Value v, std::string &why) {
  if (auto it = names.find(v); it != names.end())
    return it->second;
  if (auto arg = dyn_cast<BlockArgument>(v))
    return argument(arg, why);
  Operation *op = v.getDefiningOp();
  // An inserted op stands for a Source op: its location is not its name.
  if (!getEnclosingChange(op))
    if (auto name = sourceNameOf(op->getLoc()))
      return *name;
  CppForm form = formOf(op);
  if (form.kind == CppForm::None)
    return special(op, why);
  FailureOr<SmallVector<std::string>> a = operands(op, why);
  if (failed(a))
    return failure();
  SmallVector<std::string> &x = *a;
  switch (form.kind) {
  case CppForm::Infix:
    return "(" + x[0] + " " + form.text.str() + " " + x[1] + ")";
  case CppForm::CeilDiv:
    return "((" + x[0] + " + " + x[1] + " - 1) / " + x[1] + ")";
  case CppForm::Negate:
    return "(-" + x[0] + ")";
  case CppForm::Call:
    return form.text.str() + "(" + llvm::join(x, ", ") + ")";
  case CppForm::Cast: {
    // index <-> i32 and friends are the same C++ int: no cast to write.
    FailureOr<std::string> from = type(op->getOperand(0).getType());
    if (succeeded(from) && *from == form.text)
      return x[0];
    return "static_cast<" + form.text.str() + ">(" + x[0] + ")";
  }
  case CppForm::None:
    break;
  }
  llvm_unreachable("handled above");
}
