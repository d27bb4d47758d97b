//===- Lower.cpp - Patch the expert kernel from the Target CuIR -----------===//
//
// Lowering compares the Target CuIR with the Source CuIR of the same kernel
// and turns each difference into a localized edit of the expert source, in
// its own idiom:
//
//   - the variant's scores (a cuir.elementwise after the score GEMM): a call,
//     after the statement that completes the score tile, of a generated
//     helper that walks the accumulator fragment with the layout's exact
//     element coordinates;
//   - new kernel parameters: fields in the variant section of the params
//     header;
//   - a kernel parameter replaced by a constant (the softmax scale folded
//     into the score function): the constant, in the statements that read it;
//   - the sigmoid normaliser: the online-softmax call replaced by sigmoid
//     weights, the final division by the row sum and the log-sum-exp stores
//     removed;
//   - the full/partial split: the block bounds reassigned after the source
//     computes its own, the unmasked steps' lower bound, and, for masks with
//     a left edge, a second copy of the masking steps.
//
// Anything else that differs is an error naming the op: lowering never
// guesses.
//
//===----------------------------------------------------------------------===//

#include "cuir/Lower/Lower.h"

#include "cuir/Interpreter/Interpreter.h"
#include "cuir/Lower/CppEmitter.h"
#include "cuir/Lower/SourcePatch.h"
#include "cuir/Transfer/AttentionAnalysis.h"
#include "cuir/Transfer/Transfer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <nlohmann/json.hpp>

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::cuir;

namespace {

/// The file range a location names (through NameLoc; the callee or, with
/// `caller`, the call site of a CallSiteLoc; the anchor of an inserted op).
FileLineColRange rangeOf(Location loc, bool caller = false) {
  if (auto r = dyn_cast<FileLineColRange>(loc))
    return r;
  if (auto n = dyn_cast<NameLoc>(loc))
    return rangeOf(n.getChildLoc(), caller);
  if (auto cs = dyn_cast<CallSiteLoc>(loc))
    return rangeOf(caller ? cs.getCaller() : cs.getCallee(), caller);
  if (auto f = dyn_cast<FusedLoc>(loc))
    for (Location l : f.getLocations())
      if (auto r = rangeOf(l, caller))
        return r;
  return {};
}

struct Field {
  std::string name, ctype, pytype, extent, defaultValue;
};

class Lowerer {
public:
  Lowerer(const LoweringOptions &opt) : opt(opt) {}
  FailureOr<LoweredKernel> run(ModuleOp target, ModuleOp source);

private:
  LogicalResult lowerKernel(KernelOp t, KernelOp s);
  LogicalResult lowerVariantScores(KernelOp t, ElementwiseOp ew);
  LogicalResult lowerReplacedParams(KernelOp t, KernelOp s);
  LogicalResult lowerSigmoid(KernelOp t, KernelOp s);
  LogicalResult lowerSplit(KernelOp t, KernelOp s);
  LogicalResult add(SourceEdit e, Location loc);
  unsigned lineOf(Location loc, bool caller = false) {
    FileLineColRange r = rangeOf(loc, caller);
    return r ? r.getStartLine() : 0;
  }
  void addHelper(const std::string &key, const std::string &text) {
    if (helperKeys.insert(key).second)
      helpers.push_back(text);
  }
  void markHandled(Value v);

  const LoweringOptions &opt;
  std::string sourcePath;
  std::unique_ptr<SourceText> src;
  std::unique_ptr<SourcePatch> patch;
  std::set<std::string> helperKeys;
  std::vector<std::string> helpers;
  unsigned helperLine = 0;
  // The earliest line that calls a helper: the helpers go before its
  // function too.
  unsigned firstCallLine = 0;
  void noteCall(unsigned line) {
    if (!firstCallLine || line < firstCallLine)
      firstCallLine = line;
  }
  std::vector<Field> fields;
  std::set<std::string> fieldNames;
  llvm::DenseSet<Operation *> handled;
  // A copy of the masking steps to insert after the unmasked steps.
  unsigned copyFirst = 0, copyLast = 0, copyAfter = 0;
  std::string copyCondFrom, copyCondTo, copyIndent;
  std::string variantSpec;
  std::string normalizer = "softmax";
  // The kernel's score sites whose helper writes s / 2 for the sigmoid
  // weights.
  unsigned halvedScoreSites = 0;
  int64_t tempCount = 0;
};

void Lowerer::markHandled(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !isInsertedLoc(def->getLoc()) || !handled.insert(def).second)
    return;
  for (Value operand : def->getOperands())
    markHandled(operand);
}

LogicalResult Lowerer::add(SourceEdit e, Location loc) {
  std::string conflict;
  if (!patch->add(std::move(e), conflict))
    return emitError(loc) << "cannot patch " << sourcePath << ": " << conflict;
  return success();
}

namespace {
/// A thread's registers of an accumulator tile in the source's C++: the
/// helper's parameter, the loops over its registers, and each register's
/// offset from the thread's first query row and key (row0, col0).
struct FragmentWalk {
  std::string templateParams, param, element, qOff, kvOff;
  std::vector<std::string> loops;

  /// mma.m16n8k16 (register e of n8 tile ni of m16 slice mi, [M][N][4]) or
  /// wgmma m64nNk16 (register 4j + e of n8 tile j of the warp's 16 rows).
  static FragmentWalk of(MmaInstr instr) {
    if (instr == MmaInstr::WgmmaM64NK16)
      return {
          "int N",
          "float (&scores)[N]",
          "scores[4 * j + e]",
          "(e / 2) * 8",
          "j * 8 + (e % 2)",
          {"for (int j = 0; j < N / 4; ++j)", "for (int e = 0; e < 4; ++e)"}};
    return {"int M_TILES, int N_TILES",
            "float (&scores)[M_TILES][N_TILES][4]",
            "scores[mi][ni][e]",
            "mi * 16 + (e / 2) * 8",
            "ni * 8 + (e % 2)",
            {"for (int mi = 0; mi < M_TILES; ++mi)",
             "for (int ni = 0; ni < N_TILES; ++ni)",
             "for (int e = 0; e < 4; ++e)"}};
  }

  /// The loops around `body`, whose lines are indented for the innermost.
  std::string walk(StringRef indent, StringRef body) const {
    std::string s, in = indent.str();
    for (size_t i = 0; i < loops.size(); ++i) {
      s += indent.str() + "#pragma unroll\n";
      s += in + loops[i] + (i + 1 == loops.size() ? " {\n" : "\n");
      in += "  ";
    }
    s += body.str();
    return s + std::string(indent.size() + 2 * (loops.size() - 1), ' ') + "}\n";
  }

  /// The indent of the innermost loop's body.
  std::string bodyIndent(StringRef indent) const {
    return std::string(indent.size() + 2 * loops.size(), ' ');
  }
};
} // namespace

namespace {
/// An integer of the score function as q * q_idx + kv * kv_idx + invariant:
/// relative positions (ALiBi's kv_idx - q_idx) have this form.
struct IndexAffine {
  int64_t q = 0, kv = 0, cst = 0;
  SmallVector<std::pair<int64_t, Value>> invariant;
};
} // namespace

static bool decomposeIndex(Value v, Value qIdx, Value kvIdx,
                           const llvm::DenseSet<Value> &perElement,
                           int64_t sign, IndexAffine &out) {
  if (v == qIdx || v == kvIdx) {
    (v == qIdx ? out.q : out.kv) += sign;
    return true;
  }
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c))) {
    out.cst += sign * c.getSExtValue();
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
static std::string cppSum(ArrayRef<std::pair<int64_t, std::string>> terms) {
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

/// `text` with each C++ identifier replaced by `map(identifier)`.
static std::string
mapIdentifiers(StringRef text, llvm::function_ref<std::string(StringRef)> map) {
  std::string out;
  auto isIdent = [](char c) { return llvm::isAlnum(c) || c == '_'; };
  for (size_t i = 0; i < text.size();) {
    if (!isIdent(text[i])) {
      out += text[i++];
      continue;
    }
    size_t j = i;
    while (j < text.size() && isIdent(text[j]))
      ++j;
    out += map(text.slice(i, j));
    i = j;
  }
  return out;
}

// Builds x / 2 at the builder's insertion point, the halving pushed through
// sums, differences, negations and selects into one factor of each product,
// preferring a factor that does not depend on the element (`perElement` says
// which do): the sigmoid weights' tanh(s / 2) then costs no multiply per
// element, its half folded into the score's affine terms. Halving is exact
// (barring subnormals), so the score is bit for bit the same.
static Value buildHalf(OpBuilder &b, Value x,
                       const llvm::DenseSet<Value> &perElement) {
  // Marked as inserted, so that no source name stands for the new values.
  Location loc = FusedLoc::get(b.getContext(), {x.getLoc()},
                               b.getStringAttr(kInsertedLocTag));
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
static llvm::DenseSet<Value> perElementValues(Block &body) {
  llvm::DenseSet<Value> perElement = {body.getArgument(0), body.getArgument(3),
                                      body.getArgument(4)};
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return perElement.contains(v); }))
      perElement.insert(op.getResults().begin(), op.getResults().end());
  return perElement;
}

LogicalResult Lowerer::lowerVariantScores(KernelOp t, ElementwiseOp ew) {
  Location loc = ew.getLoc();
  Value in = ew.getInputs()[0];
  FragmentLayoutAttr layout = getFragmentLayout(in.getType());
  if (!layout || layout.getKind() != FragmentKind::Acc ||
      (layout.getInstr() == MmaInstr::WgmmaM64NK16 &&
       layout.getWarps() != ArrayRef<int64_t>{1, 1}))
    return emitError(loc) << "lowering writes variant scores over "
                             "mma.m16n8k16 accumulators and over one "
                             "warpgroup's wgmma accumulator; this tile is "
                          << in.getType();
  FragmentWalk fw = FragmentWalk::of(layout.getInstr());
  auto shape = cast<RankedTensorType>(in.getType()).getShape();
  int64_t rowsPerWarp = shape[0] / layout.getWarps()[0];
  int64_t colsPerWarp = shape[1] / layout.getWarps()[1];
  int64_t warpsN = layout.getWarps()[1];

  CppEmitter em;
  std::string why;
  auto expr = [&](Value v) -> FailureOr<std::string> {
    auto e = em.expr(v, why);
    if (failed(e))
      return emitError(loc) << "cannot write " << why << " in the source";
    markHandled(v);
    return e;
  };
  auto frag = expr(in), b = expr(ew.getB()), h = expr(ew.getH()),
       q0 = expr(ew.getQBase()), k0 = expr(ew.getKvBase());
  if (failed(frag) || failed(b) || failed(h) || failed(q0) || failed(k0))
    return failure();

  // Sigmoid weights take tanh(s / 2): the helper writes s / 2, from a copy of
  // the body with the halving folded in (the Target CuIR stays as it is).
  ElementwiseOp work = ew;
  if (normalizer == "sigmoid") {
    OpBuilder builder(ew);
    work = cast<ElementwiseOp>(builder.clone(*ew));
    Block &copy = work.getBody().front();
    Operation *yield = copy.getTerminator();
    builder.setInsertionPoint(yield);
    yield->setOperand(
        0, buildHalf(builder, yield->getOperand(0), perElementValues(copy)));
    ++halvedScoreSites;
  }
  llvm::scope_exit eraseWork([&] {
    if (work != ew)
      work.erase();
  });
  // The helper's body: the score function and mask, statement by statement.
  Block &body = work.getBody().front();
  CppEmitter bodyEm;
  bodyEm.names[body.getArgument(0)] = "s";
  bodyEm.names[body.getArgument(1)] = "b";
  bodyEm.names[body.getArgument(2)] = "h";
  bodyEm.names[body.getArgument(3)] = "q_idx";
  bodyEm.names[body.getArgument(4)] = "kv_idx";
  Value result = body.getTerminator()->getOperand(0);
  Value visible, score = result;
  if (auto sel = result.getDefiningOp<arith::SelectOp>()) {
    APFloat f(0.0f);
    if (matchPattern(sel.getFalseValue(), m_ConstantFloat(&f)) &&
        f.isInfinity() && f.isNegative()) {
      visible = sel.getCondition();
      score = sel.getTrueValue();
    }
  }
  // Statements that depend on the element (its score or indices) run per
  // element; the rest (parameter loads, per-head slopes, the reciprocal of an
  // invariant divisor) once per call, ahead of the loops.
  llvm::DenseSet<Value> perElement = perElementValues(body);
  struct Stmt {
    std::string type, name, rhs;
    bool perElement;
  };
  std::vector<Stmt> decls;
  // Relative positions written as base + offset: value -> (base, offset).
  llvm::DenseMap<Value, std::pair<std::string, std::string>> positions;
  // An invariant times a relative position: (the invariant, the position).
  auto scaledPosition =
      [&](arith::MulFOp mul) -> std::optional<std::pair<Value, Value>> {
    for (auto [a, p] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())})
      if (!perElement.contains(a) && positions.count(p))
        return std::pair(a, p);
    return std::nullopt;
  };
  llvm::StringMap<std::string> byText; // "type rhs" -> name: text-level CSE
  int n = 0;
  for (Operation &op : body.without_terminator()) {
    if (op.getNumResults() != 1 || &op == result.getDefiningOp())
      continue;
    bool elementwise = perElement.contains(op.getResult(0));
    if (isa<arith::ConstantOp>(op))
      continue; // written as literals where used
    auto ty = CppEmitter::type(op.getResult(0).getType());
    FailureOr<std::string> e = failure();
    auto div = dyn_cast<arith::DivFOp>(op);
    IndexAffine pos;
    if (elementwise && isa<arith::SIToFPOp>(op) &&
        decomposeIndex(op.getOperand(0), body.getArgument(3),
                       body.getArgument(4), perElement, 1, pos)) {
      // A relative position as float: its invariant part converted once per
      // call, the element's constant offset added per element (after
      // unrolling, one add instead of an int-to-float conversion; exact
      // below 2^24).
      SmallVector<std::pair<int64_t, std::string>> inv = {{pos.q, "row0"},
                                                          {pos.kv, "col0"}};
      for (auto [coef, x] : pos.invariant) {
        auto xe = bodyEm.expr(x, why);
        if (failed(xe))
          return emitError(op.getLoc())
                 << "cannot write the variant's scores in C++: " << why;
        inv.push_back({coef, *xe});
      }
      if (pos.cst)
        inv.push_back({pos.cst, "1"});
      std::string base = "f" + std::to_string(++n);
      decls.push_back(
          {"float", base, "static_cast<float>(" + cppSum(inv) + ")", false});
      std::string offset = "static_cast<float>(" +
                           cppSum({{pos.q, "q_off"}, {pos.kv, "kv_off"}}) + ")";
      positions[op.getResult(0)] = {base, offset};
      e = "(" + base + " + " + offset + ")";
    } else if (auto mul = dyn_cast<arith::MulFOp>(op);
               mul && elementwise && scaledPosition(mul)) {
      // slope * (base + offset) = (slope * base) + slope * offset: the first
      // product once per call, one FMA per element (within an ulp).
      auto [a, p] = *scaledPosition(mul);
      auto ae = bodyEm.expr(a, why);
      if (succeeded(ae)) {
        std::string g = "g" + std::to_string(++n);
        decls.push_back({"float", g, *ae + " * " + positions[p].first, false});
        e = "(" + g + " + " + *ae + " * " + positions[p].second + ")";
      }
    } else if (elementwise && div && !perElement.contains(div.getRhs())) {
      // x / c with c invariant: one reciprocal per call, a multiply per
      // element (within an ulp of the division).
      auto num = bodyEm.expr(div.getLhs(), why);
      auto den = bodyEm.expr(div.getRhs(), why);
      if (succeeded(num) && succeeded(den)) {
        std::string rcp = "r" + std::to_string(++n);
        decls.push_back({"float", rcp, "1.f / " + *den, false});
        e = "(" + *num + " * " + rcp + ")";
      }
    } else {
      e = bodyEm.expr(op.getResult(0), why);
    }
    if (failed(ty) || failed(e))
      return emitError(op.getLoc())
             << "cannot write the variant's scores in C++: " << why;
    if (op.getNumOperands() == 1 &&
        bodyEm.names.lookup(op.getOperand(0)) == *e) {
      bodyEm.names[op.getResult(0)] = *e; // a cast C++ does not need
      continue;
    }
    auto [it, fresh] =
        byText.try_emplace(*ty + " " + *e, "v" + std::to_string(n + 1));
    if (fresh)
      decls.push_back({*ty, "v" + std::to_string(++n), *e, elementwise});
    bodyEm.names[op.getResult(0)] = it->second;
  }
  auto scoreE = bodyEm.expr(score, why);
  if (failed(scoreE))
    return emitError(loc) << "cannot write the variant's score: " << why;
  std::string assign;
  if (visible) {
    auto visE = bodyEm.expr(visible, why);
    if (failed(visE))
      return emitError(loc) << "cannot write the variant's mask: " << why;
    assign =
        "MASK ? (" + *visE + " ? " + *scoreE + " : -INFINITY) : " + *scoreE;
  } else {
    assign = *scoreE;
  }
  // Only what the score and mask read, numbered in order.
  llvm::StringSet<> used;
  auto markUsed = [&](StringRef id) {
    used.insert(id);
    return id.str();
  };
  mapIdentifiers(assign, markUsed);
  std::vector<bool> live(decls.size());
  for (size_t i = decls.size(); i-- > 0;) {
    if (!used.contains(decls[i].name))
      continue;
    live[i] = true;
    mapIdentifiers(decls[i].rhs, markUsed);
  }
  llvm::StringMap<std::string> rename;
  int next = 0;
  for (size_t i = 0; i < decls.size(); ++i)
    if (live[i])
      rename[decls[i].name] =
          std::string(1, decls[i].name[0]) + std::to_string(++next);
  auto renamed = [&](StringRef text) {
    return mapIdentifiers(text, [&](StringRef id) {
      auto r = rename.find(id);
      return r == rename.end() ? id.str() : r->second;
    });
  };
  const std::string ind = fw.bodyIndent("  ");
  std::string hoisted, stmts;
  for (size_t i = 0; i < decls.size(); ++i)
    if (live[i])
      (decls[i].perElement ? stmts : hoisted) +=
          (decls[i].perElement ? ind : std::string("  ")) + "const " +
          decls[i].type + " " + rename[decls[i].name] + " = " +
          renamed(decls[i].rhs) + ";\n";
  assign = renamed(assign);
  std::string loopBody =
      ind + "const int q_off = " + fw.qOff + ", q_idx = row0 + q_off;\n" + ind +
      "const int kv_off = " + fw.kvOff + ", kv_idx = col0 + kv_off;\n" + ind +
      "const float s = " + fw.element + ";\n" + stmts + ind + fw.element +
      " = " + assign + ";\n";
  std::string helper =
      "// ---- cuir: the scores of the variant '" + variantSpec +
      "' (generated from the Target CuIR): each\n"
      "//      score s of an " +
      stringifyMmaInstr(layout.getInstr()).str() +
      " accumulator tile becomes score_mod(s), or -inf where the\n"
      "//      mask hides it (MASK: partial blocks only). row0/col0: this "
      "thread's first query and key. ----\n"
      "template <bool MASK, " +
      fw.templateParams +
      ">\n"
      "__device__ __forceinline__ void cuir_variant_scores(" +
      fw.param +
      ", const cuir_attention_params &params,\n"
      "                                                    int b, int h, int "
      "row0, int col0) {\n"
      "  (void)params, (void)b, (void)h;\n" +
      hoisted + fw.walk("  ", loopBody) + "}\n";
  if (helper.find(kTanhApproxName) != std::string::npos)
    addHelper("tanh", kTanhApproxHelper);
  addHelper("variant_scores", helper);

  // The call, right after the statement that completes the score tile.
  unsigned anchor = lineOf(loc);
  if (!anchor)
    return emitError(loc) << "the variant's scores have no anchor in the "
                             "source";
  auto [first, last] = src->statement(anchor);
  std::string indent = src->indent(first).str();
  std::string lane = "(threadIdx.x % 32)", warp = "(threadIdx.x / 32)";
  if (layout.getInstr() == MmaInstr::WgmmaM64NK16) {
    // Warp w of a warpgroup holds rows [16w, 16w + 16) of its 64.
    warp = "(threadIdx.x / 32 % 4)";
    rowsPerWarp = 16;
  }
  std::string row0 =
      *q0 + " + " +
      (warpsN == 1 ? warp : "(" + warp + " / " + std::to_string(warpsN) + ")") +
      " * " + std::to_string(rowsPerWarp) + " + " + lane + " / 4";
  std::string col0 =
      *k0 +
      (warpsN == 1 ? std::string()
                   : " + (" + warp + " % " + std::to_string(warpsN) + ") * " +
                         std::to_string(colsPerWarp)) +
      " + " + lane + " % 4 * 2";
  std::string call =
      indent + "// ---- cuir: the variant's " +
      (visible ? "scores and mask" : "scores") + " ----\n" + indent +
      "cuir_variant_scores<" + (visible ? "true" : "false") + ">(" + *frag +
      ", params, " + *b + ", " + *h + ", " + row0 + ", " + col0 + ");";
  handled.insert(ew);
  ew.walk([&](Operation *op) { handled.insert(op); });
  noteCall(last);
  return add({SourceEdit::InsertAfter, last, last, call, "", ""}, loc);
}

LogicalResult Lowerer::lowerReplacedParams(KernelOp t, KernelOp s) {
  // Inserted constants anchored at a kernel parameter replace its uses.
  for (auto cst : t.getBody().front().getOps<arith::ConstantOp>()) {
    if (!isInsertedLoc(cst.getLoc()))
      continue;
    auto fused = cast<FusedLoc>(cst.getLoc());
    std::optional<std::string> anchorName =
        sourceNameOf(fused.getLocations().front());
    for (BlockArgument arg : s.getBody().front().getArguments()) {
      if (!anchorName || sourceNameOf(arg.getLoc()) != anchorName ||
          rangeOf(arg.getLoc()) != rangeOf(cst.getLoc()))
        continue;
      auto role =
          s.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kArgRoleAttr);
      handled.insert(cst);
      if (role && role.getValue() == "causal")
        continue; // variant kernels run the non-causal instantiation
      auto name = sourceNameOf(arg.getLoc());
      std::string why;
      CppEmitter em;
      auto lit = em.expr(cst.getResult(), why);
      if (!name || failed(lit))
        return emitError(cst.getLoc()) << "cannot name the replaced parameter";
      for (OpOperand &use : arg.getUses()) {
        Operation *user = use.getOwner();
        FileLineColRange r = rangeOf(user->getLoc());
        if (!r)
          continue;
        if (failed(add({SourceEdit::ReplaceText, r.getStartLine(),
                        r.getEndLine(), "", *name, *lit},
                       user->getLoc())))
          return failure();
      }
    }
  }
  return success();
}

LogicalResult Lowerer::lowerSigmoid(KernelOp t, KernelOp s) {
  auto norm = t->getAttrOfType<StringAttr>("cuir.normalizer");
  if (!norm || norm.getValue() != "sigmoid")
    return success();
  FailureOr<AttentionStructure> as = analyzeAttention(s);
  if (failed(as))
    return failure();
  std::string why;
  FragmentLayoutAttr layout = getFragmentLayout(as->sites[0].score.getType());
  if (!layout)
    return emitError(as->sites[0].score.getLoc())
           << "has no register fragment layout to write sigmoid weights over";
  FragmentWalk fw = FragmentWalk::of(layout.getInstr());
  for (ScoreSite &site : as->sites) {
    unsigned call = lineOf(site.weights->getLoc(), /*caller=*/true);
    auto frag = CppEmitter().expr(site.score, why);
    if (!call || failed(frag))
      return emitError(site.weights->getLoc())
             << "cannot find the softmax's call in the source";
    auto [first, last] = src->statement(call);
    std::string indent = src->indent(first).str();
    noteCall(first);
    if (failed(add({SourceEdit::ReplaceLines, first, last,
                    indent + "cuir_sigmoid_weights(" + *frag +
                        ");  // cuir: sigmoid weights: no row max, row sum "
                        "or rescale",
                    "", ""},
                   site.weights->getLoc())))
      return failure();
    // Weights that are not normalised need no correction of O: a rescale
    // the source calls apart from the softmax goes too.
    Operation *rescale = site.rescaledAcc.getDefiningOp();
    unsigned rescaleCall =
        rescale ? lineOf(rescale->getLoc(), /*caller=*/true) : 0;
    if (rescaleCall && isa<CallSiteLoc>(rescale->getLoc()) &&
        src->statement(rescaleCall).first != first) {
      auto [rfirst, rlast] = src->statement(rescaleCall);
      if (failed(add({SourceEdit::ReplaceLines, rfirst, rlast, "", "", ""},
                     rescale->getLoc())))
        return failure();
    }
  }
  // sigmoid(s) = (1 + tanh(s / 2)) / 2: one SFU op, no division. Where the
  // variant's scores are written, they come as s / 2 already.
  if (halvedScoreSites && halvedScoreSites != as->sites.size())
    return emitError(t.getLoc())
           << "the variant's scores cover " << halvedScoreSites << " of the "
           << as->sites.size() << " score tiles the sigmoid weights read";
  bool halved = halvedScoreSites != 0;
  addHelper("tanh", kTanhApproxHelper);
  addHelper(
      "sigmoid",
      "// ---- cuir: sigmoid weights, p = 1 / (1 + exp(-s)) = (1 + "
      "tanh(s / 2)) / 2, in place over an accumulator tile" +
          std::string(halved ? " of s / 2\n"
                               "//      (the variant's scores halve "
                               "their affine terms, no multiply per "
                               "score) ----\n"
                             : " ----\n") +
          "template <" + fw.templateParams +
          ">\n"
          "__device__ __forceinline__ void cuir_sigmoid_weights(" +
          fw.param + ") {\n" +
          fw.walk("  ", fw.bodyIndent("  ") + fw.element +
                            " = 0.5f * cuir_tanh_approx(" +
                            (halved ? fw.element : "0.5f * " + fw.element) +
                            ") + 0.5f;\n") +
          "}\n");
  // The output is the weighted sum itself, and has no log-sum-exp.
  SmallVector<Operation *> removed;
  s.walk([&](Operation *op) {
    // The row normaliser after the loops (not the correction a pipelined
    // kernel applies before its last P V: a loop result, and the rescale
    // removed above).
    if (auto mul = dyn_cast<arith::MulFOp>(op))
      if (auto bc = mul.getRhs().getDefiningOp<BroadcastRowsOp>())
        if (!mul->getParentOfType<scf::ForOp>() &&
            isa<RankedTensorType>(mul.getType()) &&
            cast<RankedTensorType>(mul.getType()).getRank() == 2 &&
            !bc.getInput().getDefiningOp<scf::ForOp>())
          removed.push_back(bc.getInput().getDefiningOp());
    if (auto store = dyn_cast<StoreOp>(op)) {
      Value dst = store.getDst();
      while (auto sub = dst.getDefiningOp<memref::SubViewOp>())
        dst = sub.getSource();
      if (auto arg = dyn_cast<BlockArgument>(dst))
        if (auto role = s.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                       kArgRoleAttr);
            role && role.getValue() == "lse")
          removed.push_back(store);
    }
  });
  for (Operation *op : removed) {
    if (!op)
      continue;
    unsigned line = lineOf(op->getLoc());
    if (!line)
      return emitError(op->getLoc()) << "has no source line to patch";
    auto [first, last] = src->statement(line);
    if (isa<StoreOp>(op)) {
      if (failed(add({SourceEdit::ReplaceLines, first, last, "", "", ""},
                     op->getLoc())))
        return failure();
      continue;
    }
    // The row normaliser: assign 1 instead.
    std::string text = src->line(first).str();
    size_t eq = text.find(" = ");
    if (eq == std::string::npos || first != last)
      return emitError(op->getLoc())
             << "expects the row normaliser as one assignment in the source";
    if (failed(add({SourceEdit::ReplaceLines, first, last,
                    text.substr(0, eq) +
                        " = 1.f;  // cuir: sigmoid weights are not normalised",
                    "", ""},
                   op->getLoc())))
      return failure();
  }
  t.walk([&](Operation *op) {
    if (isInsertedLoc(op->getLoc()) && !op->getParentOfType<ElementwiseOp>() &&
        !isa<ElementwiseOp>(op)) {
      for (ScoreSite &site : as->sites)
        if (rangeOf(op->getLoc()) == rangeOf(site.weights->getLoc()))
          handled.insert(op);
    }
  });
  return success();
}

LogicalResult Lowerer::lowerSplit(KernelOp t, KernelOp s) {
  if (!t->hasAttr("cuir.split"))
    return success();
  FailureOr<AttentionStructure> ts = analyzeAttention(t);
  FailureOr<AttentionStructure> ss = analyzeAttention(s);
  if (failed(ts) || failed(ss))
    return failure();
  if (ss->sites.size() != 2 || ts->sites.size() < 2)
    return t.emitError() << "lowering of the split expects the source's two "
                            "loops of key/value blocks";
  auto ubParts = [](scf::ForOp loop) -> std::pair<Value, Value> {
    if (auto sub = loop.getUpperBound().getDefiningOp<arith::SubIOp>())
      return {sub.getLhs(), sub.getRhs()};
    return {};
  };
  auto [nMax, nC] = ubParts(ts->sites[0].loop);
  auto [nC2, nB] = ubParts(ts->sites[1].loop);
  Value nA;
  if (ts->sites.size() == 3)
    nA = ubParts(ts->sites[2].loop).second;
  auto [sX, sY] = ubParts(ss->sites[0].loop);
  // The source's lowest block, when its unmasked steps stop at one.
  std::optional<std::string> zName;
  if (Value sZ = ubParts(ss->sites[1].loop).second)
    if (Operation *zDef = sZ.getDefiningOp())
      zName = sourceNameOf(zDef->getLoc());
  for (ScoreSite &site : ts->sites)
    markHandled(site.loop.getUpperBound());
  if (!nMax || !nB || !sX || !sY || (ts->sites.size() == 3 && !nA))
    return t.emitError() << "cannot read the split's block bounds";

  // The bounds as C++ statements, after the source computes its own.
  Operation *xDef = sX.getDefiningOp(), *yDef = sY.getDefiningOp();
  Operation *later = xDef->isBeforeInBlock(yDef) ? yDef : xDef;
  auto xName = sourceNameOf(xDef->getLoc()),
       yName = sourceNameOf(yDef->getLoc());
  if (!xName || !yName)
    return t.emitError() << "the source's block bounds have no names";
  unsigned line = lineOf(later->getLoc());
  auto [first, last] = src->statement(line);
  std::string indent = src->indent(first).str();

  CppEmitter em;
  std::string why;
  tempCount = 0; // the same names in every instantiation
  // Temporaries for values used more than once.
  llvm::SetVector<Operation *> slice;
  std::function<void(Value)> collect = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || !isInsertedLoc(def->getLoc()) || slice.contains(def))
      return;
    for (Value o : def->getOperands())
      collect(o);
    slice.insert(def);
  };
  for (Value v : {nMax, nC, nB, nA})
    if (v)
      collect(v);
  std::string code = indent +
                     "// ---- cuir: the key/value blocks the variant's mask "
                     "needs, split into masked and unmasked steps ----\n";
  for (Operation *op : slice) {
    handled.insert(op);
    if (isa<arith::ConstantOp>(op) || op->getResult(0).hasOneUse())
      continue;
    auto e = em.expr(op->getResult(0), why);
    if (failed(e))
      return emitError(op->getLoc())
             << "cannot write the split in C++: " << why;
    std::string name = "cuir_t" + std::to_string(++tempCount);
    code += indent + "const int " + name + " = " + *e + ";\n";
    em.names[op->getResult(0)] = name;
  }
  auto emit = [&](Value v) -> FailureOr<std::string> {
    auto e = em.expr(v, why);
    if (failed(e))
      return emitError(t.getLoc()) << "cannot write the split in C++: " << why;
    return e;
  };
  auto eMax = emit(nMax), eC = emit(nC), eB = emit(nB);
  if (failed(eMax) || failed(eC) || failed(eB))
    return failure();
  code += indent + *xName + " = " + *eMax + ";\n";
  code += indent + *yName + " = " + *eC + ";\n";
  code += indent + "const int cuir_n_full_min = " + *eB +
          ";  // unmasked steps: blocks [cuir_n_full_min, " + *yName + ")";
  std::string blockMin = zName ? *zName : "cuir_n_block_min";
  if (nA) {
    auto eA = emit(nA);
    if (failed(eA))
      return failure();
    code += "\n" + indent + (zName ? "" : "const int ") + blockMin + " = " +
            *eA + ";  // masked steps again: blocks [" + blockMin +
            ", cuir_n_full_min)";
  }
  if (failed(add({SourceEdit::InsertAfter, last, last, code, "", ""},
                 later->getLoc())))
    return failure();

  // The unmasked steps stop at cuir_n_full_min.
  scf::ForOp unmasked = ss->sites[1].loop;
  unsigned uline = lineOf(unmasked.getLoc());
  auto [ufirst, ulast] = src->statement(uline);
  std::string ucond = ">= " + (zName ? *zName : std::string("0")) + ";";
  if (src->line(ufirst).find(ucond) == StringRef::npos)
    return unmasked.emitError()
           << "expects the unmasked steps as 'for (; n " << ucond << " --n)'";
  if (failed(add({SourceEdit::ReplaceText, ufirst, ufirst, "", ucond,
                  ">= cuir_n_full_min;"},
                 unmasked.getLoc())))
    return failure();
  if (nA) {
    scf::ForOp masked = ss->sites[0].loop;
    auto [mfirst, mlast] = src->statement(lineOf(masked.getLoc()));
    std::string cond = ">= " + *yName + ";";
    if (src->line(mfirst).find(cond) == StringRef::npos)
      return masked.emitError()
             << "expects the masking steps as 'for (; n " << cond << " --n)'";
    copyFirst = mfirst;
    copyLast = mlast;
    copyAfter = ulast;
    copyCondFrom = cond;
    copyCondTo = ">= " + blockMin + ";";
    copyIndent = src->indent(mfirst).str();
  }
  return success();
}

LogicalResult Lowerer::lowerKernel(KernelOp t, KernelOp s) {
  if (auto spec = t->getAttrOfType<StringAttr>("cuir.variant"))
    variantSpec = spec.getValue().str();
  if (auto norm = t->getAttrOfType<StringAttr>("cuir.normalizer"))
    normalizer = norm.getValue().str();
  // New parameters: fields of the params struct.
  for (BlockArgument arg : t.getBody().front().getArguments()) {
    auto role =
        t.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kArgRoleAttr);
    if (!role || !role.getValue().starts_with("param:"))
      continue;
    std::string name = role.getValue().drop_front(6).str();
    if (!fieldNames.insert(name).second)
      continue;
    Field f;
    f.name = name;
    Type ty = arg.getType();
    if (auto m = dyn_cast<MemRefType>(ty)) {
      bool isF = m.getElementType().isF32();
      f.ctype = isF ? "const float *" : "const int32_t *";
      f.pytype = isF ? "float_ptr" : "int32_ptr";
      if (auto e =
              t.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "cuir.extent"))
        f.extent = e.getValue().str();
    } else if (ty.isF32()) {
      f.ctype = "float ";
      f.pytype = "float";
    } else {
      f.ctype = "int32_t ";
      f.pytype = "int32";
    }
    if (auto d =
            t.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "cuir.default"))
      f.defaultValue = d.getValue().str();
    fields.push_back(f);
  }
  if (failed(lowerReplacedParams(t, s)))
    return failure();
  SmallVector<ElementwiseOp> variantOps;
  t.walk([&](ElementwiseOp ew) {
    if (ew->hasAttr(kVariantOpAttr))
      variantOps.push_back(ew);
  });
  halvedScoreSites = 0;
  for (ElementwiseOp ew : variantOps)
    if (failed(lowerVariantScores(t, ew)))
      return failure();
  if (failed(lowerSigmoid(t, s)) || failed(lowerSplit(t, s)))
    return failure();
  // Every op a transform inserted must have become part of a patch.
  WalkResult r = t.walk([&](Operation *op) {
    if (!isInsertedLoc(op->getLoc()) || handled.contains(op) ||
        op->getParentOfType<ElementwiseOp>())
      return WalkResult::advance();
    if (op->use_empty() || isa<arith::ConstantOp>(op))
      return WalkResult::advance();
    op->emitError() << "was inserted by a transform, but lowering has no "
                       "patch for it";
    return WalkResult::interrupt();
  });
  return failure(r.wasInterrupted());
}

FailureOr<LoweredKernel> Lowerer::run(ModuleOp target, ModuleOp source) {
  LoweredKernel out;
  bool any = false;
  for (KernelOp t : target.getOps<KernelOp>()) {
    auto s = source.lookupSymbol<KernelOp>(t.getSymName());
    if (!s)
      return t.emitError() << "has no counterpart in the Source CuIR: "
                              "lowering patches the kernel it was lifted from";
    FileLineColRange kr = rangeOf(s.getLoc());
    if (!kr)
      return s.emitError() << "has no source location: lowering needs the "
                              "lift's locations";
    SmallString<256> path(kr.getFilename().getValue());
    if (!llvm::sys::path::is_absolute(path) && !opt.sourceRoot.empty()) {
      path = opt.sourceRoot;
      llvm::sys::path::append(path, kr.getFilename().getValue());
    }
    if (!src) {
      auto buf = llvm::MemoryBuffer::getFile(path);
      if (!buf)
        return t.emitError()
               << "cannot read the source '" << path << "' (set source-root)";
      sourcePath = std::string(path);
      src = std::make_unique<SourceText>((*buf)->getBuffer());
      patch = std::make_unique<SourcePatch>(*src);
      helperLine = src->declarationStart(kr.getStartLine());
    } else if (std::string(path) != sourcePath) {
      return t.emitError() << "comes from another source file than the "
                              "module's other kernels";
    }
    any = true;
    if (failed(lowerKernel(t, s)))
      return failure();
  }
  if (!any)
    return emitError(target.getLoc())
           << "the module has no cuir.kernel to lower";
  if (!helpers.empty()) {
    if (firstCallLine)
      helperLine = std::min(helperLine, src->topLevelStart(firstCallLine));
    std::string text;
    for (const std::string &h : helpers)
      text += h + "\n";
    std::string conflict;
    SourceEdit e{SourceEdit::InsertBefore,        helperLine, helperLine,
                 text.substr(0, text.size() - 1), "",         ""};
    if (!patch->add(e, conflict))
      return emitError(target.getLoc()) << conflict;
  }
  if (copyFirst) {
    std::string loop = patch->render(copyFirst, copyLast);
    size_t pos = loop.find(copyCondFrom);
    loop.replace(pos, copyCondFrom.size(), copyCondTo);
    loop.pop_back();
    std::string text = "\n" + copyIndent +
                       "// =============================== masking steps "
                       "below the full blocks (cuir) "
                       "===============================\n" +
                       loop;
    std::string conflict;
    if (!patch->add(
            {SourceEdit::InsertAfter, copyAfter, copyAfter, text, "", ""},
            conflict))
      return emitError(target.getLoc()) << conflict;
  }
  out.sourcePath = sourcePath;
  out.patched = patch->render();

  // The params header gains the variant's fields.
  // The manifest loaders bind by: each field's name, type, extent and, for
  // values captured from Python, the default.
  nlohmann::ordered_json manifest = {
      {"variant", variantSpec},
      {"normalizer", normalizer},
      {"fields", nlohmann::ordered_json::array()},
      {"is_causal", 0}};
  for (const Field &f : fields) {
    nlohmann::ordered_json field = {
        {"name", f.name}, {"type", f.pytype}, {"extent", f.extent}};
    if (!f.defaultValue.empty())
      field["default"] = f.defaultValue;
    manifest["fields"].push_back(field);
  }
  std::string json = manifest.dump() + "\n";
  out.manifest = json;
  if (!fields.empty()) {
    SmallVector<std::string> dirs(opt.includeDirs.begin(),
                                  opt.includeDirs.end());
    SmallString<256> guess(llvm::sys::path::parent_path(sourcePath));
    llvm::sys::path::append(guess, "..", "include");
    dirs.push_back(std::string(guess));
    for (const std::string &d : dirs) {
      SmallString<256> h(d);
      llvm::sys::path::append(h, "cuir", "attention_params.h");
      if (llvm::sys::fs::exists(h)) {
        out.headerPath = std::string(h);
        break;
      }
    }
    if (out.headerPath.empty())
      return emitError(target.getLoc())
             << "the variant adds parameters, but cuir/attention_params.h was "
                "not found (add an include dir)";
    auto buf = llvm::MemoryBuffer::getFile(out.headerPath);
    SourceText header((*buf)->getBuffer());
    SourcePatch hp(header);
    unsigned end = 0;
    for (unsigned l = 1; l <= header.numLines() && !end; ++l)
      if (header.line(l).contains("CUIR VARIANT PARAMETERS END"))
        for (unsigned k = l; k <= header.numLines() && !end; ++k)
          if (header.line(k).contains("*/"))
            end = k;
    if (!end)
      return emitError(target.getLoc())
             << out.headerPath << " has no variant parameter section";
    std::string text =
        "  /* cuir: parameters of the variant '" + variantSpec + "' */";
    for (const Field &f : fields)
      text += "\n  " + f.ctype + f.name + ";" +
              (f.extent.empty() ? "" : "  /* [" + f.extent + "] */");
    std::string conflict;
    hp.add({SourceEdit::InsertAfter, end, end, text, "", ""}, conflict);
    out.headerPatched = hp.render();
  }
  return out;
}

} // namespace

FailureOr<LoweredKernel>
mlir::cuir::lowerToSource(ModuleOp target, ModuleOp source,
                          const LoweringOptions &options) {
  Lowerer l(options);
  return l.run(target, source);
}
