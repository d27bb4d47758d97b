//===- CppEmitter.cpp - CuIR values as expressions of the source ----------===//

#include "cuir/Lower/CppEmitter.h"

#include "cuir/Dialect/CuIR.h"


#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <climits>
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
  // f16 and bf16 values (loaded, or rounded by truncf) are held in floats.
  if (t.isF32() || t.isF16() || t.isBF16())
    return std::string("float");
  return failure();
}

static std::string floatLiteral(const APFloat &f) {
  if (f.isNaN()) {
    // No literal names a NaN; its f32 bits do (the payload kept).
    APFloat single = f;
    bool lost;
    single.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    char buf[48];
    std::snprintf(buf, sizeof(buf), "__int_as_float(0x%08x)",
                  unsigned(single.bitcastToAPInt().getZExtValue()));
    return buf;
  }
  double v = f.convertToDouble();
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

/// A __device__ function the lowering writes once, before the code that
/// calls it, for an op C++ has no operator or CUDA function of the same
/// meaning for.
struct DeviceHelper {
  const char *name, *text;
};

#define CUIR_INT_HELPERS(T, S, U, BITS)                                        \
  {"cuir_floordivsi_" S, "__device__ __forceinline__ " T " cuir_floordivsi_" S \
                         "(" T " a, " T " b) {\n  const " T " q = a / b;\n"      \
                         "  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 "  \
                         ": q;\n}\n"},                                          \
      {"cuir_ceildivsi_" S,                                                    \
       "__device__ __forceinline__ " T " cuir_ceildivsi_" S "(" T " a, " T      \
       " b) {\n  const " T " q = a / b;\n  return (a % b != 0 && (a < 0) == "   \
       "(b < 0)) ? q + 1 : q;\n}\n"},                                           \
      {"cuir_addi_" S, "__device__ __forceinline__ " T " cuir_addi_" S "(" T   \
                       " a, " T " b) {\n  return static_cast<" T               \
                       ">(static_cast<" U ">(a) + static_cast<" U ">(b));\n}\n"}, \
      {"cuir_subi_" S, "__device__ __forceinline__ " T " cuir_subi_" S "(" T   \
                       " a, " T " b) {\n  return static_cast<" T               \
                       ">(static_cast<" U ">(a) - static_cast<" U ">(b));\n}\n"}, \
      {"cuir_muli_" S, "__device__ __forceinline__ " T " cuir_muli_" S "(" T   \
                       " a, " T " b) {\n  return static_cast<" T               \
                       ">(static_cast<" U ">(a) * static_cast<" U ">(b));\n}\n"}, \
      {"cuir_shli_" S,                                                         \
       "__device__ __forceinline__ " T " cuir_shli_" S "(" T " a, " T          \
       " b) {\n  return (b < 0 || b >= " BITS ") ? 0 : static_cast<" T         \
       ">(static_cast<" U ">(a) << b);\n}\n"},                                  \
      {"cuir_shrsi_" S,                                                        \
       "__device__ __forceinline__ " T " cuir_shrsi_" S "(" T " a, " T         \
       " b) {\n  return (b < 0 || b >= " BITS ") ? (a < 0 ? -1 : 0) : a >> "    \
       "b;\n}\n"},                                                              \
      {"cuir_shrui_" S,                                                        \
       "__device__ __forceinline__ " T " cuir_shrui_" S "(" T " a, " T         \
       " b) {\n  return (b < 0 || b >= " BITS ") ? 0 : static_cast<" T         \
       ">(static_cast<" U ">(a) >> b);\n}\n"},                                  \
      {"cuir_absi_" S, "__device__ __forceinline__ " T " cuir_absi_" S "(" T   \
                       " a) {\n  return a < 0 ? static_cast<" T                \
                       ">(static_cast<" U ">(0) - static_cast<" U             \
                       ">(a)) : a;\n}\n"},                                      \
      {"cuir_maxsi_" S, "__device__ __forceinline__ " T " cuir_maxsi_" S "(" T \
                        " a, " T " b) { return a > b ? a : b; }\n"},           \
  {                                                                            \
    "cuir_minsi_" S, "__device__ __forceinline__ " T " cuir_minsi_" S "(" T    \
                     " a, " T " b) { return a < b ? a : b; }\n"                 \
  }

const DeviceHelper kDeviceHelpers[] = {
    CUIR_INT_HELPERS("int", "i32", "unsigned", "32"),
    CUIR_INT_HELPERS("int64_t", "i64", "uint64_t", "64"),
    {"cuir_maximumf",
     "// arith.maximumf: NaN if either is NaN; +0 above -0.\n"
     "__device__ __forceinline__ float cuir_maximumf(float a, float b) {\n"
     "  if (isnan(a) || isnan(b))\n    return __int_as_float(0x7fc00000);\n"
     "  if (a == b)\n"
     "    return __int_as_float(__float_as_int(a) & __float_as_int(b));\n"
     "  return a > b ? a : b;\n}\n"},
    {"cuir_minimumf",
     "// arith.minimumf: NaN if either is NaN; -0 below +0.\n"
     "__device__ __forceinline__ float cuir_minimumf(float a, float b) {\n"
     "  if (isnan(a) || isnan(b))\n    return __int_as_float(0x7fc00000);\n"
     "  if (a == b)\n"
     "    return __int_as_float(__float_as_int(a) | __float_as_int(b));\n"
     "  return a < b ? a : b;\n}\n"},
    {"cuir_pairs_aligned",
     "// Whether p is aligned for two elements at once; then p, so declared\n"
     "// to the compiler, which may merge a thread's loads of adjacent keys.\n"
     "template <class T>\n"
     "__device__ __forceinline__ bool cuir_pairs_aligned(const T *p) {\n"
     "  return reinterpret_cast<uintptr_t>(p) % (2 * sizeof(T)) == 0;\n}\n"
     "template <class T>\n"
     "__device__ __forceinline__ const T *cuir_assume_pairs_aligned(const T "
     "*p) {\n"
     "  return static_cast<const T *>(__builtin_assume_aligned(p, 2 * "
     "sizeof(T)));\n}\n"},
    {"cuir_load_pair",
     "// Two adjacent elements of a tensor as one word (p aligned for two).\n"
     "template <class W, class T>\n"
     "__device__ __forceinline__ void cuir_load_pair(W &w, const T *p) {\n"
     "  static_assert(sizeof(W) == 2 * sizeof(T), \"a word of two "
     "elements\");\n"
     "  w = *reinterpret_cast<const W *>(p);\n}\n"},
    {"cuir_pair_elem",
     "// Element k of a word of two elements of a tensor.\n"
     "template <class W, class T>\n"
     "__device__ __forceinline__ T cuir_pair_elem(const T *, W w, int k) {\n"
     "  static_assert(sizeof(W) == 2 * sizeof(T), \"a word of two "
     "elements\");\n"
     "  const W bits = w >> (8 * sizeof(T) * k);\n"
     "  T t;\n"
     "  __builtin_memcpy(&t, &bits, sizeof(T));\n"
     "  return t;\n}\n"},
    {"cuir_chunks_aligned",
     "// Whether p is aligned for 16 bytes (a chunk that cp.async copies).\n"
     "template <class T>\n"
     "__device__ __forceinline__ bool cuir_chunks_aligned(const T *p) {\n"
     "  return reinterpret_cast<uintptr_t>(p) % 16 == 0;\n}\n"},
    {"cuir_stage_chunk",
     "// Copies the 16 bytes at p (aligned) to dst in shared memory, "
     "asynchronously\n"
     "// (cp.async, sm_80+; done for this thread at cuir_stage_wait).\n"
     "__device__ __forceinline__ void cuir_stage_chunk(unsigned char *dst, "
     "const void *p) {\n"
     "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\" ::\n"
     "               \"r\"(static_cast<uint32_t>(__cvta_generic_to_shared(dst)"
     ")), \"l\"(p) : \"memory\");\n}\n"
     "__device__ __forceinline__ void cuir_stage_commit() {\n"
     "  asm volatile(\"cp.async.commit_group;\" ::: \"memory\");\n}\n"
     "__device__ __forceinline__ void cuir_stage_wait() {\n"
     "  asm volatile(\"cp.async.wait_group 0;\" ::: \"memory\");\n}\n"},
    {"cuir_ldmatrix_x4",
     "// ldmatrix.x4 (sm_75+): four 8 x 8 matrices of 16-bit elements in "
     "shared memory,\n"
     "// the rows of matrix i at the `row`s of lanes 8i .. 8i + 7; lane l "
     "gets row l / 4,\n"
     "// elements 2 (l % 4) and 2 (l % 4) + 1 of each, as one word.\n"
     "__device__ __forceinline__ void cuir_ldmatrix_x4(uint32_t &a, uint32_t "
     "&b, uint32_t &c, uint32_t &d,\n"
     "                                                 const unsigned char "
     "*row) {\n"
     "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, "
     "%3}, [%4];\"\n"
     "               : \"=r\"(a), \"=r\"(b), \"=r\"(c), \"=r\"(d)\n"
     "               : \"r\"(static_cast<uint32_t>(__cvta_generic_to_shared("
     "row)))\n"
     "               : \"memory\");\n}\n"},
    {"cuir_round_bf16",
     "// arith.truncf to bf16 (round to nearest even), held in a float.\n"
     "__device__ __forceinline__ float cuir_round_bf16(float x) {\n"
     "  unsigned short b;\n"
     "  asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(b) : \"f\"(x));\n"
     "  return __uint_as_float(static_cast<unsigned>(b) << 16);\n}\n"},
    {"cuir_round_f16",
     "// arith.truncf to f16 (round to nearest even), held in a float.\n"
     "__device__ __forceinline__ float cuir_round_f16(float x) {\n"
     "  unsigned short h;\n  float y;\n"
     "  asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(x));\n"
     "  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(y) : \"h\"(h));\n"
     "  return y;\n}\n"},
    {"cuir_bf16_bits_to_float",
     "// A bf16 (its bits) as the float of the same value.\n"
     "__device__ __forceinline__ float cuir_bf16_bits_to_float(uint16_t b) {\n"
     "  return __uint_as_float(static_cast<unsigned>(b) << 16);\n}\n"},
    {"cuir_f16_bits_to_float",
     "// An f16 (its bits) as the float of the same value.\n"
     "__device__ __forceinline__ float cuir_f16_bits_to_float(uint16_t h) {\n"
     "  float y;\n  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(y) : \"h\"(h));\n"
     "  return y;\n}\n"},
};

#undef CUIR_INT_HELPERS

/// The suffix of the integer helpers for `t`; index computes as an int, or
/// at 64 bits where `wideIndex`.
StringRef intSuffix(Type t, bool wideIndex) {
  return t.isInteger(64) || (t.isIndex() && wideIndex) ? "i64" : "i32";
}

bool isWideInt(Type t) { return t.isInteger(32) || t.isInteger(64); }

/// How an op is written in C++.
struct CppForm {
  enum Kind { None, Infix, Call, Cast, CeilDiv, Negate } kind = None;
  std::string text; // the operator, function or target type
};

/// Integer ops: wrapping sums and products, floor and ceil division, shifts,
/// bitwise logic, as helpers or operators of their width. Index values that
/// an int holds (operands and result; `wideIndex` false) keep the plain
/// operators, which then cannot overflow; `plainCeilDiv`: an index ceildivsi
/// whose dividend is non-negative and divisor positive, as `(a + b - 1) / b`
/// without overflow.
CppForm intForm(Operation *op, bool wideIndex, bool plainCeilDiv) {
  using K = CppForm::Kind;
  StringRef name = op->getName().getStringRef();
  Type t = op->getResult(0).getType();
  std::string sfx = intSuffix(t, wideIndex).str();
  auto helper = [&](StringRef base) {
    return CppForm{K::Call, "cuir_" + base.str() + "_" + sfx};
  };
  if (name == "arith.floordivsi")
    return helper("floordivsi");
  if (llvm::is_contained({"arith.shli", "arith.shrsi", "arith.shrui"}, name))
    return helper(name.drop_front(6));
  if (name == "math.absi")
    return helper("absi");
  if (!t.isInteger(1) &&
      llvm::is_contained({"arith.andi", "arith.ori", "arith.xori"}, name))
    return llvm::StringSwitch<CppForm>(name)
        .Case("arith.andi", {K::Infix, "&"})
        .Case("arith.ori", {K::Infix, "|"})
        .Default({K::Infix, "^"});
  if (name == "arith.ceildivsi" && t.isIndex() && !wideIndex && plainCeilDiv)
    return {K::CeilDiv, ""};
  bool wide = isWideInt(t) || (t.isIndex() && wideIndex);
  if (llvm::is_contained({"arith.addi", "arith.subi", "arith.muli"}, name))
    return wide ? helper(name.drop_front(6)) : CppForm{};
  if (name == "arith.ceildivsi")
    return helper("ceildivsi");
  if (sfx == "i64" && (name == "arith.maxsi" || name == "arith.minsi"))
    return helper(name.drop_front(6));
  return {};
}

/// The form of the ops written by one operator, function or cast.
CppForm formOf(Operation *op, bool wideIndex, bool plainCeilDiv) {
  using K = CppForm::Kind;
  if (op->getNumResults() == 1 && op->getResult(0).getType().isIntOrIndex())
    if (CppForm f = intForm(op, wideIndex, plainCeilDiv); f.kind != K::None)
      return f;
  return llvm::StringSwitch<CppForm>(op->getName().getStringRef())
      .Cases({"arith.addi", "arith.addf"}, {K::Infix, "+"})
      .Cases({"arith.subi", "arith.subf"}, {K::Infix, "-"})
      .Cases({"arith.muli", "arith.mulf"}, {K::Infix, "*"})
      .Cases({"arith.divsi", "arith.divf"}, {K::Infix, "/"})
      .Case("arith.remsi", {K::Infix, "%"})
      .Case("arith.remf", {K::Call, "fmodf"})
      .Case("arith.andi", {K::Infix, "&&"})
      .Case("arith.ori", {K::Infix, "||"})
      .Case("arith.xori", {K::Infix, "!="})
      .Case("arith.minsi", {K::Call, "min"})
      .Case("arith.maxsi", {K::Call, "max"})
      .Case("arith.maximumf", {K::Call, "cuir_maximumf"})
      .Case("arith.minimumf", {K::Call, "cuir_minimumf"})
      .Case("arith.maxnumf", {K::Call, "fmaxf"})
      .Case("arith.minnumf", {K::Call, "fminf"})
      .Case("arith.negf", {K::Negate, ""})
      .Case("math.tanh", {K::Call, kTanhApproxName})
      .Case("math.exp", {K::Call, "__expf"})
      .Case("math.exp2", {K::Call, "exp2f"})
      .Case("math.log", {K::Call, "__logf"})
      .Case("math.log2", {K::Call, "log2f"})
      .Case("math.log1p", {K::Call, "log1pf"})
      .Case("math.expm1", {K::Call, "expm1f"})
      .Case("math.sqrt", {K::Call, "sqrtf"})
      .Case("math.rsqrt", {K::Call, "rsqrtf"})
      .Case("math.absf", {K::Call, "fabsf"})
      .Case("math.erf", {K::Call, "erff"})
      .Case("math.sin", {K::Call, "sinf"})
      .Case("math.cos", {K::Call, "cosf"})
      .Case("math.floor", {K::Call, "floorf"})
      .Case("math.ceil", {K::Call, "ceilf"})
      .Case("math.trunc", {K::Call, "truncf"})
      .Case("math.roundeven", {K::Call, "rintf"})
      .Case("math.copysign", {K::Call, "copysignf"})
      .Case("math.powf", {K::Call, "powf"})
      .Case("math.fma", {K::Call, "fmaf"})
      .Cases({"arith.sitofp", "arith.uitofp", "arith.fptosi",
              "arith.index_cast", "arith.index_castui", "arith.extui",
              "arith.extsi", "arith.trunci", "arith.extf", "arith.truncf"},
             {K::Cast, ""})
      .Default({});
}

/// The C++ operator of an integer comparison (i1 is signed with true = -1:
/// its signed order is the reverse of bool's).
StringRef cmpiSymbol(arith::CmpIPredicate p, bool isBool) {
  static const char *syms[] = {"==", "!=", "<",  "<=", ">",
                               ">=", "<",  "<=", ">",  ">="};
  static const char *boolSyms[] = {"==", "!=", ">",  ">=", "<",
                                   "<=", "<",  "<=", ">",  ">="};
  return (isBool ? boolSyms : syms)[static_cast<int>(p)];
}

bool isUnsignedPredicate(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  return p == P::ult || p == P::ule || p == P::ugt || p == P::uge;
}

/// A float comparison exactly as MLIR defines it: ordered predicates are
/// false on NaN (as C++'s operators, except !=), unordered ones true.
std::string cmpfExpr(arith::CmpFPredicate p, const std::string &a,
                     const std::string &b) {
  using P = arith::CmpFPredicate;
  auto bin = [&](StringRef sym) { return "(" + a + " " + sym.str() + " " + b + ")"; };
  auto neg = [&](StringRef sym) { return "!" + bin(sym); };
  std::string ordered_ne = "((" + a + " < " + b + ") || (" + a + " > " + b + "))";
  switch (p) {
  case P::AlwaysFalse:
    return "false";
  case P::AlwaysTrue:
    return "true";
  case P::OEQ:
    return bin("==");
  case P::OGT:
    return bin(">");
  case P::OGE:
    return bin(">=");
  case P::OLT:
    return bin("<");
  case P::OLE:
    return bin("<=");
  case P::ONE:
    return ordered_ne;
  case P::UEQ:
    return "!" + ordered_ne;
  case P::UGT:
    return neg("<=");
  case P::UGE:
    return neg("<");
  case P::ULT:
    return neg(">=");
  case P::ULE:
    return neg(">");
  case P::UNE:
    return bin("!=");
  case P::ORD:
    return "(!isnan(" + a + ") && !isnan(" + b + "))";
  case P::UNO:
    return "(isnan(" + a + ") || isnan(" + b + "))";
  }
  llvm_unreachable("all predicates handled");
}

/// The unsigned C++ type of the width integer type `t` computes at (index:
/// 64 bits).
std::string unsignedType(Type t) {
  return t.isInteger(64) || t.isIndex() ? "uint64_t" : "uint32_t";
}

} // namespace

std::string mlir::cuir::deviceHelpersUsedBy(StringRef text) {
  std::string out;
  for (const DeviceHelper &h : kDeviceHelpers)
    if (text.contains((Twine(h.name) + "(").str()))
      out += h.text;
  return out;
}

FailureOr<std::string> CppEmitter::typeOf(Value v) {
  if (v.getType().isIndex())
    return std::string(fitsInt(v) ? "int" : "int64_t");
  return type(v.getType());
}

bool CppEmitter::isSourceValue(Value v) {
  Operation *op = v.getDefiningOp();
  if (!op)
    op = cast<BlockArgument>(v).getOwner()->getParentOp();
  if (!op || !(isa<KernelOp>(op) || op->getParentOfType<KernelOp>()))
    return false;
  if (ChangeAttr own = getChange(op))
    return own.getRewrite() == Rewrite::Scores ||
           own.getRewrite() == Rewrite::Blocks;
  return !getEnclosingChange(op);
}

bool CppEmitter::fitsInt(Value v) {
  return ranges.within(v, INT32_MIN, INT32_MAX);
}

bool CppEmitter::wideIndexOp(Operation *op) {
  auto wide = [&](Value v) { return v.getType().isIndex() && !fitsInt(v); };
  return llvm::any_of(op->getResults(), wide) ||
         llvm::any_of(op->getOperands(), wide);
}

bool CppEmitter::isNoOpCast(Operation *op) {
  if (!isa<CastOpInterface>(op) || op->getNumOperands() != 1 ||
      op->getNumResults() != 1 || isa<arith::TruncFOp>(op))
    return false;
  Value fromV = op->getOperand(0), toV = op->getResult(0);
  Type from = fromV.getType(), to = toV.getType();
  if (from.isInteger(1) != to.isInteger(1))
    return false;
  if (isa<arith::FPToSIOp, arith::FPToUIOp, arith::SIToFPOp,
          arith::UIToFPOp>(op))
    return false;
  // A zero extension of an i32 keeps its value only where it is not
  // negative.
  if (from.isInteger(32) && isa<arith::ExtUIOp, arith::IndexCastUIOp>(op) &&
      !ranges.nonNegative(fromV))
    return false;
  FailureOr<std::string> a = typeOf(fromV), b = typeOf(toV);
  return succeeded(a) && succeeded(b) && *a == *b;
}

/// The C++ of cast `op` of `x` (see isNoOpCast for those written as `x`).
FailureOr<std::string> CppEmitter::castExpr(Operation *op, const std::string &x,
                                            std::string &why) {
  Type from = op->getOperand(0).getType(), to = op->getResult(0).getType();
  FailureOr<std::string> toC = typeOf(op->getResult(0));
  if (failed(toC) || failed(type(from))) {
    why = "a cast between types without a C++ form";
    return failure();
  }
  if (isNoOpCast(op))
    return x;
  auto sc = [](StringRef t, const std::string &e) {
    return "static_cast<" + t.str() + ">(" + e + ")";
  };
  bool fromBool = from.isInteger(1);
  if (auto t = dyn_cast<arith::TruncFOp>(op)) {
    if (to.isBF16() || to.isF16())
      return std::string(to.isBF16() ? "cuir_round_bf16(" : "cuir_round_f16(") +
             x + ")";
    return x;
  }
  if (isa<arith::SIToFPOp>(op))
    return fromBool ? "(" + x + " ? -1.0f : 0.0f)" : sc("float", x);
  if (isa<arith::UIToFPOp>(op))
    return sc("float", fromBool ? x : sc(unsignedType(from), x));
  if (isa<arith::FPToSIOp>(op)) {
    // cvt.rzi: toward zero, saturating, NaN -> 0 (MLIR: poison when out of
    // range; the interpreter saturates alike).
    if (to.isInteger(1))
      return "(" + x + " <= -1.0f)";
    return (*toC == "int64_t" ? "__float2ll_rz(" : "__float2int_rz(") + x + ")";
  }
  if (to.isInteger(1))
    return sc("bool", "(" + x + " & 1)");
  // Sign extension of i1 (true is -1); zero extension of i32 to i64.
  if (fromBool && isa<arith::ExtSIOp, arith::IndexCastOp>(op))
    return "(-" + sc(*toC, x) + ")";
  if (from.isInteger(32) && isa<arith::ExtUIOp, arith::IndexCastUIOp>(op))
    return sc(*toC, sc("uint32_t", x));
  if (isa<arith::FPToUIOp>(op)) {
    why = "'arith.fptoui' has no C++ form in the lowering";
    return failure();
  }
  return sc(*toC, x);
}

FailureOr<std::string> CppEmitter::argument(BlockArgument arg,
                                            std::string &why) {
  Operation *owner = arg.getOwner()->getParentOp();
  if (auto kernel = dyn_cast<KernelOp>(owner))
    if (auto name = variantParamName(argRole(kernel, arg.getArgNumber())))
      return paramsName + "." + name->str();
  if (auto name = sourceNameOf(arg.getLoc()); name && sourceNames)
    return *name;
  // A loop's induction variable is named by the loop: `for (int h = ...)`.
  if (auto loop = dyn_cast<scf::ForOp>(owner);
      loop && sourceNames && arg == loop.getInductionVar())
    if (auto name = sourceNameOf(loop.getLoc()))
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
    return floatLiteral(f.getValue());
  auto i = dyn_cast<IntegerAttr>(c.getValue());
  if (!i) {
    why = "a non-scalar constant";
    return failure();
  }
  Type t = c.getType();
  if (t.isInteger(1))
    return std::string(i.getValue().isZero() ? "false" : "true");
  int64_t v = i.getValue().getSExtValue();
  bool fitsInt = v >= INT32_MIN && v <= INT32_MAX;
  // The most negative values have no literal: 2147483648 is not an int.
  if (v == INT32_MIN && !t.isInteger(64))
    return std::string("(-2147483647 - 1)");
  if (v == INT64_MIN)
    return std::string("(-9223372036854775807LL - 1)");
  return std::to_string(v) + (fitsInt ? "" : "LL");
}

/// `load` of a parameter: a 1-D array as `a[i]`, a captured tensor as
/// `a[i0 * s0 + ... + in]` with its row-major strides as constants; f16 and
/// bf16 elements are converted to float.
static FailureOr<std::string>
flatIndex(memref::LoadOp load, ArrayRef<std::string> a, std::string &why) {
  MemRefType type = load.getMemRefType();
  std::string flat;
  if (type.getRank() == 1) {
    flat = a[1];
  } else if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
    why = "a load from something other than a 1-D parameter or a captured "
          "tensor (static shape, row-major)";
    return failure();
  } else {
    int64_t stride = 1;
    SmallVector<std::string> terms;
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      terms.push_back(stride == 1 ? a[d + 1]
                                  : a[d + 1] + " * " + std::to_string(stride));
      std::optional<int64_t> next =
          llvm::checkedMul(stride, type.getDimSize(d));
      if (!next || *next > INT32_MAX) {
        why = "a load from a tensor of more than 2^31 - 1 elements";
        return failure();
      }
      stride = *next;
    }
    std::reverse(terms.begin(), terms.end());
    flat = llvm::join(terms, " + ");
  }
  return flat;
}

static FailureOr<std::string>
loadExpr(memref::LoadOp load, ArrayRef<std::string> a, std::string &why) {
  FailureOr<std::string> flat = flatIndex(load, a, why);
  if (failed(flat))
    return failure();
  std::string elem = a[0] + "[" + *flat + "]";
  Type et = load.getMemRefType().getElementType();
  if (et.isBF16())
    return "cuir_bf16_bits_to_float(" + elem + ")";
  if (et.isF16())
    return "cuir_f16_bits_to_float(" + elem + ")";
  return elem;
}

FailureOr<std::string> CppEmitter::special(Operation *op, std::string &why) {
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    return constant(c, why);
  FailureOr<SmallVector<std::string>> a = operands(op, why);
  if (failed(a))
    return failure();
  if (auto c = dyn_cast<arith::CmpIOp>(op)) {
    if (std::optional<NarrowedCompare> n = narrowedCompare(c)) {
      FailureOr<std::string> l0 = expr(n->lhs0, why), l1 = expr(n->lhs1, why),
                             r = expr(n->rhs, why);
      if (failed(l0) || failed(l1) || failed(r))
        return failure();
      return "((" + *l0 + (n->plus ? " + " : " - ") + *l1 + ") " +
             cmpiSymbol(n->pred, false).str() + " " + *r + ")";
    }
    Type t = c.getLhs().getType();
    std::string x = (*a)[0], y = (*a)[1];
    // Unsigned order is signed order on non-negative values.
    if (isUnsignedPredicate(c.getPredicate()) && !t.isInteger(1) &&
        !(ranges.nonNegative(c.getLhs()) && ranges.nonNegative(c.getRhs()))) {
      x = "static_cast<" + unsignedType(t) + ">(" + x + ")";
      y = "static_cast<" + unsignedType(t) + ">(" + y + ")";
    }
    return "(" + x + " " +
           cmpiSymbol(c.getPredicate(), t.isInteger(1)).str() + " " + y + ")";
  }
  if (auto c = dyn_cast<arith::CmpFOp>(op))
    return cmpfExpr(c.getPredicate(), (*a)[0], (*a)[1]);
  if (isa<arith::SelectOp>(op))
    return "(" + (*a)[0] + " ? " + (*a)[1] + " : " + (*a)[2] + ")";
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return loadExpr(load, *a, why);
  why = "'" + op->getName().getStringRef().str() +
        "' has no C++ form in the lowering";
  return failure();
}

namespace {
/// The predicate of `y p x` for `x p y`.
arith::CmpIPredicate swapped(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  switch (p) {
  case P::sge:
    return P::sle;
  case P::sle:
    return P::sge;
  case P::sgt:
    return P::slt;
  case P::slt:
    return P::sgt;
  default:
    return p;
  }
}

bool isSignedOrEquality(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  return p == P::eq || p == P::ne || p == P::sge || p == P::sgt ||
         p == P::sle || p == P::slt;
}

/// A signed range [lo, hi] of 64-bit values.
struct Interval {
  int64_t lo, hi;
  bool fitsInt() const { return lo >= INT32_MIN && hi <= INT32_MAX; }
};
} // namespace

// The window's edges, `q + Nkv - Nq - window_left` with an i32 window, may
// pass an int and are computed at 64 bits (docs/Lowering.md); per score that
// doubled the mask's registers, and the kernels at their register limit
// spilled. The moved form is the same comparison of integers: index is 64
// bits and no sum here comes near 2^63.
std::optional<CppEmitter::NarrowedCompare>
CppEmitter::narrowedCompare(arith::CmpIOp c) {
  if (!c.getLhs().getType().isIndex() || !isSignedOrEquality(c.getPredicate()))
    return std::nullopt;
  auto interval = [&](Value v) {
    ConstantIntRanges r = ranges.of(v);
    return Interval{r.smin().getSExtValue(), r.smax().getSExtValue()};
  };
  // `x p side`, side = a + b or a - b not an int, x, a and b ints.
  auto tryMove = [&](Value x, Value side,
                     arith::CmpIPredicate p) -> std::optional<NarrowedCompare> {
    Operation *def = side.getDefiningOp();
    if (fitsInt(side) || !fitsInt(x) ||
        !isa_and_nonnull<arith::AddIOp, arith::SubIOp>(def))
      return std::nullopt;
    Value a = def->getOperand(0), b = def->getOperand(1);
    if (!fitsInt(a) || !fitsInt(b))
      return std::nullopt;
    Interval ix = interval(x), ia = interval(a), ib = interval(b);
    if (isa<arith::AddIOp>(def)) {
      // x p a + b  <=>  x - a p b  <=>  x - b p a
      if (Interval{ix.lo - ia.hi, ix.hi - ia.lo}.fitsInt())
        return NarrowedCompare{x, a, false, p, b};
      if (Interval{ix.lo - ib.hi, ix.hi - ib.lo}.fitsInt())
        return NarrowedCompare{x, b, false, p, a};
      return std::nullopt;
    }
    // x p a - b  <=>  a - x p' b (p' swapped)  <=>  x + b p a
    if (Interval{ia.lo - ix.hi, ia.hi - ix.lo}.fitsInt())
      return NarrowedCompare{a, x, false, swapped(p), b};
    if (Interval{ix.lo + ib.lo, ix.hi + ib.hi}.fitsInt())
      return NarrowedCompare{x, b, true, p, a};
    return std::nullopt;
  };
  if (std::optional<NarrowedCompare> n =
          tryMove(c.getLhs(), c.getRhs(), c.getPredicate()))
    return n;
  return tryMove(c.getRhs(), c.getLhs(), swapped(c.getPredicate()));
}

FailureOr<std::string> CppEmitter::address(memref::LoadOp load,
                                           std::string &why) {
  FailureOr<SmallVector<std::string>> a = operands(load, why);
  if (failed(a))
    return failure();
  FailureOr<std::string> flat = flatIndex(load, *a, why);
  if (failed(flat))
    return failure();
  return "(" + (*a)[0] + " + " + *flat + ")";
}

FailureOr<std::string> CppEmitter::unsignedOp(Operation *op, std::string &why) {
  FailureOr<SmallVector<std::string>> a = operands(op, why);
  FailureOr<std::string> t = typeOf(op->getResult(0));
  if (failed(a) || failed(t))
    return failure();
  const std::string &x = (*a)[0], &y = (*a)[1];
  bool isMin = isa<arith::MinUIOp>(op);
  if (llvm::all_of(op->getOperands(),
                   [&](Value v) { return ranges.nonNegative(v); })) {
    // Signed and unsigned agree on non-negative values.
    if (isa<arith::DivUIOp>(op))
      return "(" + x + " / " + y + ")";
    if (isa<arith::RemUIOp>(op))
      return "(" + x + " % " + y + ")";
    if (isa<arith::CeilDivUIOp>(op))
      return "(" + x + " / " + y + " + (" + x + " % " + y + " != 0))";
    if (*t == "int" && !wideIndexOp(op))
      return std::string(isMin ? "min(" : "max(") + x + ", " + y + ")";
    return std::string(isMin ? "cuir_minsi_i64(" : "cuir_maxsi_i64(") + x +
           ", " + y + ")";
  }
  std::string u = unsignedType(op->getResult(0).getType());
  std::string ux = "static_cast<" + u + ">(" + x + ")",
              uy = "static_cast<" + u + ">(" + y + ")";
  auto back = [&](const std::string &e) {
    return "static_cast<" + *t + ">(" + e + ")";
  };
  if (isa<arith::DivUIOp>(op))
    return back(ux + " / " + uy);
  if (isa<arith::RemUIOp>(op))
    return back(ux + " % " + uy);
  if (isa<arith::CeilDivUIOp>(op))
    return back(ux + " / " + uy + " + (" + ux + " % " + uy + " != 0)");
  return "(" + ux + (isMin ? " < " : " > ") + uy + " ? " + x + " : " + y + ")";
}

FailureOr<std::string> CppEmitter::expr(Value v, std::string &why) {
  if (auto it = names.find(v); it != names.end())
    return it->second;
  if (auto arg = dyn_cast<BlockArgument>(v))
    return argument(arg, why);
  Operation *op = v.getDefiningOp();
  // An inserted op stands for a Source op: its location is not its name.
  if (sourceNames && !getEnclosingChange(op))
    if (auto name = sourceNameOf(op->getLoc()))
      return *name;
  FailureOr<std::string> e = opExpr(op, why);
  // An index value an int holds is an int, also where it is computed at 64
  // bits: CUDA's min and max, for one, take operands of one type.
  if (succeeded(e) && v.getType().isIndex() && !isa<CastOpInterface>(op) &&
      fitsInt(v) && wideIndexOp(op) &&
      !StringRef(*e).starts_with("static_cast<int>("))
    return "static_cast<int>(" + *e + ")";
  return e;
}

FailureOr<std::string> CppEmitter::opExpr(Operation *op, std::string &why) {
  // f16/bf16 values are floats in C++: only ops that round (or keep) them
  // at their precision have a form.
  Type rt = op->getNumResults() == 1 ? op->getResult(0).getType() : Type();
  if (rt && (rt.isF16() || rt.isBF16()) &&
      !isa<memref::LoadOp, arith::TruncFOp, arith::ConstantOp,
           arith::SelectOp>(op)) {
    why = "'" + op->getName().getStringRef().str() + "' on " +
          (rt.isF16() ? "f16" : "bf16") +
          " (extend to f32 first: the lowering computes in f32)";
    return failure();
  }
  if (isa<arith::DivUIOp, arith::RemUIOp, arith::CeilDivUIOp, arith::MinUIOp,
          arith::MaxUIOp>(op))
    return unsignedOp(op, why);
  bool wideIndex = wideIndexOp(op), plainCeilDiv = false;
  if (auto div = dyn_cast<arith::CeilDivSIOp>(op); div && !wideIndex) {
    // (a + b - 1) / b: a >= 0, b >= 1, a + b - 1 an int.
    ConstantIntRanges a = ranges.of(div.getLhs()), b = ranges.of(div.getRhs());
    plainCeilDiv =
        !a.smin().isNegative() && b.smin().sge(1) &&
        a.smax().getSExtValue() + b.smax().getSExtValue() - 1 <= INT32_MAX;
  }
  CppForm form = formOf(op, wideIndex, plainCeilDiv);
  if (form.kind == CppForm::None)
    return special(op, why);
  FailureOr<SmallVector<std::string>> a = operands(op, why);
  if (failed(a))
    return failure();
  SmallVector<std::string> &x = *a;
  switch (form.kind) {
  case CppForm::Infix:
    return "(" + x[0] + " " + form.text + " " + x[1] + ")";
  case CppForm::CeilDiv:
    return "((" + x[0] + " + " + x[1] + " - 1) / " + x[1] + ")";
  case CppForm::Negate:
    return "(-" + x[0] + ")";
  case CppForm::Call:
    return form.text + "(" + llvm::join(x, ", ") + ")";
  case CppForm::Cast:
    return castExpr(op, x[0], why);
  case CppForm::None:
    break;
  }
  llvm_unreachable("handled above");
}
