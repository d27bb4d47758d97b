//===- ParamGradPatcher.cpp - Gradients of a variant's float parameters ---===//
//
// The backward transfer accumulates, for each element a score_mod loads from
// a float array parameter, dS * d score_mod / d element into the parameter's
// fp32 gradient buffer (a kernel argument "grad:<name>") with a
// cuir.scatter_add after dS. Lowering writes:
//   - the buffer as a params field `float *cuir_grad_<name>`, which the
//     manifest lists ("type": "grad", "param": <name>) for the loaders to
//     bind; a null pointer means the parameter is not trained, and the
//     helper returns at once;
//   - per scatter_add, a helper that walks the dS accumulator fragment with
//     the layout's exact element coordinates and atomicAdd(float *)s each
//     nonzero value at its index. Where no index depends on the element
//     (ALiBi's slopes[h]), the thread sums its values and the warp reduces
//     them, so that one lane adds once per call;
//   - "centred": "row-diagonal" in the manifest's field where the scatters
//     are cuir.row_centred (the kernel's arithmetic, for checks);
//   - its call right after the statement that forms dS, ahead of the score
//     derivative's product there (dS is dL / d modified score until then).
//     A partial that reads the score computes it from the raw scores that
//     the scores call kept (KeptScores.h: the kernel's S tile is P by
//     then).
//
//===----------------------------------------------------------------------===//

#include "FragmentWalk.h"
#include "KeptScores.h"
#include "Patcher.h"
#include "ScoreHelper.h"

#include "cuir/Lower/CppEmitter.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <climits>
#include <map>

using namespace mlir;
using namespace mlir::cuir;

namespace {

/// The params field of the gradient buffer of parameter `param`.
std::string gradField(StringRef param) { return ("cuir_grad_" + param).str(); }

class ParamGradPatcher : public Patcher {
public:
  Rewrite getRewrite() const override { return Rewrite::ParamGrad; }

  LogicalResult patch(ArrayRef<Difference> differences,
                      PatchContext &ctx) override {
    llvm::DenseSet<Operation *> written;
    for (const Difference &d : differences) {
      if (d.kind == Difference::Kind::Argument) {
        if (failed(addField(d.argument, ctx)))
          return failure();
        continue;
      }
      auto op = dyn_cast_or_null<ScatterAddOp>(d.target);
      if (d.kind != Difference::Kind::Inserted || !op)
        return emitError(d.getLoc())
               << "is recorded as a parameter gradient, but only the "
                  "gradient buffers and their cuir.scatter_add are";
      if (failed(lowerScatter(op, ctx)))
        return failure();
      written.insert(op);
    }
    for (ParamField &f : ctx.fields)
      if (centred.contains(f.gradOf))
        f.rowCentred = true;
    // One edit per statement: the two instantiations of a step template
    // make the same calls, two partials of one statement two calls.
    for (auto &[line, call] : calls) {
      SourceEdit edit{SourceEdit::InsertAfter, line, line, "", "", ""};
      edit.text = llvm::join(call.texts, "\n");
      edit.leading = true;
      if (failed(ctx.edit(std::move(edit), call.loc)))
        return failure();
    }
    calls.clear();
    return checkAllWritten(differences, written);
  }

private:
  LogicalResult addField(BlockArgument arg, PatchContext &ctx);
  LogicalResult lowerScatter(ScatterAddOp op, PatchContext &ctx);
  /// The helpers written, by their text (without the name): one per
  /// distinct body.
  std::map<std::string, std::string> helperNames;
  /// The calls to insert after each statement, in order, once each.
  struct Calls {
    SmallVector<std::string> texts;
    Location loc;
  };
  std::map<unsigned, Calls> calls;
  /// The parameters whose scatters are cuir.row_centred.
  llvm::StringSet<> centred;
};

LogicalResult ParamGradPatcher::addField(BlockArgument arg, PatchContext &ctx) {
  KernelOp kernel = ctx.diff->target;
  unsigned i = arg.getArgNumber();
  StringRef role = argRole(kernel, i);
  if (!role.consume_front(kGradRolePrefix))
    return emitError(arg.getLoc())
           << "is a new kernel argument of the parameter gradients without a "
              "'grad:<name>' role: lowering cannot bind it";
  ParamField f;
  f.name = gradField(role);
  f.ctype = "float *";
  f.pytype = "grad";
  f.gradOf = role.str();
  auto m = cast<MemRefType>(arg.getType());
  if (m.hasStaticShape()) {
    f.dtype = "float32";
    f.shape.assign(m.getShape().begin(), m.getShape().end());
    f.strides.assign(m.getRank(), 0);
    int64_t stride = 1;
    for (int64_t d = m.getRank() - 1; d >= 0; --d) {
      f.strides[d] = stride;
      std::optional<int64_t> next = llvm::checkedMul(stride, m.getDimSize(d));
      if (!next || *next > INT32_MAX)
        return emitError(arg.getLoc())
               << "is the gradient of '" << role << "' (" << m
               << "): more than 2^31 - 1 elements, which the kernel's int "
                  "indexing cannot address";
      stride = *next;
    }
  } else if (auto e = kernel.getArgAttrOfType<StringAttr>(
                 i, CuIRDialect::ExtentAttrHelper::getNameStr())) {
    f.extent = e.getValue().str();
  }
  if (ctx.fieldNames.insert(f.name).second)
    ctx.fields.push_back(f);
  return success();
}

LogicalResult ParamGradPatcher::lowerScatter(ScatterAddOp op,
                                             PatchContext &ctx) {
  Location loc = op.getLoc();
  // A partial that reads the score reads the raw scores the scores call
  // kept.
  bool readsScores = op.getInputs().size() == 2;
  Value dS = op.getInputs()[0];
  if (readsScores) {
    Value raw = op.getInputs()[1];
    if (!isKeptScores(raw) || raw.getType() != dS.getType())
      return emitError(loc)
             << "accumulates a parameter's gradient from a tile that is not "
                "the raw scores of the variant's scores: lowering has no "
                "copy of it where dS is formed";
  }
  FragmentLayoutAttr layout = getFragmentLayout(dS.getType());
  if (!layout || layout.getKind() != FragmentKind::Acc ||
      (layout.getInstr() == MmaInstr::WgmmaM64NK16 &&
       layout.getWarps() != ArrayRef<int64_t>{1, 1}))
    return emitError(loc) << "lowering accumulates parameter gradients over "
                             "mma.m16n8k16 accumulators and one warpgroup's "
                             "wgmma accumulator; this tile is "
                          << dS.getType();
  auto dst = cast<BlockArgument>(op.getDst());
  StringRef param = argRole(ctx.diff->target, dst.getArgNumber()).drop_front(5);
  if (CuIRDialect::RowCentredAttrHelper(op->getContext()).isAttrPresent(op))
    centred.insert(param);
  auto dstType = cast<MemRefType>(dst.getType());
  bool transposed = holdsTransposedRegisters(dS);
  FragmentWalk fw = FragmentWalk::of(layout.getInstr(), transposed);
  std::string ind = fw.bodyIndent("  ");
  FailureOr<ScatterBody> body = printScatterBody(op, "  ", ind);
  if (failed(body))
    return failure();
  // The element's offset, row-major.
  std::string offset;
  int64_t stride = 1;
  for (int64_t d = dstType.getRank() - 1; d >= 0; --d) {
    std::string term = "static_cast<int>(" + body->indices[d] + ")";
    if (stride != 1)
      term += " * " + std::to_string(stride);
    offset = offset.empty() ? term : term + " + " + offset;
    if (d > 0)
      stride *= dstType.getDimSize(d);
  }
  std::string field = "params." + gradField(param);
  std::string element =
      ind + "const int q_off = " + fw.qOff + ", q_idx = row0 + q_off;\n" + ind +
      "const int kv_off = " + fw.kvOff + ", kv_idx = col0 + kv_off;\n" + ind +
      "const float ds = " + fw.element() + ";\n" +
      (readsScores ? ind + "const float s = raw(" + fw.flat + ");\n"
                   : std::string()) +
      ind + "(void)q_idx, (void)kv_idx;\n" + body->stmts;
  std::string walk, tail;
  if (body->perElementIndex) {
    walk = fw.walk("  ", element + ind + "const float value = " + body->value +
                             ";\n" + ind + "if (value != 0.f) atomicAdd(&" +
                             field + "[" + offset + "], value);\n");
  } else {
    // One place for every element of the call: a sum per thread, then per
    // warp (the callers pass the thread block's b and h), one add.
    walk = "  float sum = 0.f;\n" +
           fw.walk("  ", element + ind + "sum += " + body->value + ";\n");
    tail = "#pragma unroll\n"
           "  for (int lanes = 16; lanes > 0; lanes /= 2) sum += "
           "__shfl_xor_sync(0xffffffffu, sum, lanes);\n"
           "  if (threadIdx.x % 32 == 0 && sum != 0.f) atomicAdd(&" +
           field + "[" + offset + "], sum);\n";
  }
  std::string helper =
      "// ---- cuir: the gradient of the variant's parameter '" + param.str() +
      "' (generated from the Target CuIR): each\n"
      "//      dS element of an " +
      stringifyMmaInstr(layout.getInstr()).str() +
      " accumulator tile adds dS * d score_mod / d " + param.str() +
      "[...] into\n"
      "//      params." +
      gradField(param) +
      " (fp32, zeroed by the caller; null: not trained). row0/col0: this "
      "thread's\n"
      "//      first query and key. ----\n"
      "template <" +
      fw.templateParams + (readsScores ? ", class Raw" : "") +
      ">\n"
      "__device__ __forceinline__ void @NAME@(" +
      fw.param() + (readsScores ? ", const Raw &raw" : "") + ", const " +
      ctx.paramsStruct +
      " &params,\n"
      "                                                 int b, int h, int "
      "row0, int col0) {\n"
      "  (void)b, (void)h;\n"
      "  if (" +
      field + " == nullptr) return;\n" + body->hoisted + walk + tail + "}\n";
  std::string &name = helperNames[helper];
  if (name.empty()) {
    name = "cuir_param_grad_" + std::to_string(helperNames.size() - 1);
    std::string text = helper;
    text.replace(text.find("@NAME@"), 6, name);
    ctx.addHelper(name, text);
  }

  // The call, after the statement that forms dS.
  std::string why;
  CppEmitter em;
  SmallVector<std::string> args;
  for (Value v : SmallVector<Value>{dS, op.getB(), op.getH(), op.getQBase(),
                                    op.getKvBase()}) {
    FailureOr<std::string> e = em.expr(v, why);
    if (failed(e))
      return emitError(loc) << "cannot write " << why << " in the source";
    args.push_back(*e);
  }
  auto shape = cast<RankedTensorType>(dS.getType()).getShape();
  auto [row0, col0] =
      FragmentWalk::threadOrigin(layout, shape, transposed, args[3], args[4]);
  unsigned anchor = ctx.lineOf(dS.getDefiningOp()->getLoc(), /*caller=*/true);
  if (!anchor)
    return emitError(loc) << "dS has no anchor in the source";
  auto [first, last] = ctx.src.statement(anchor);
  std::string indent = ctx.src.indent(first).str();
  ctx.noteCall(last);
  std::string tiles = readsScores ? args[0] + ", " + kKeptScoresName : args[0];
  std::string text = indent + "// ---- cuir: the gradient of '" + param.str() +
                     "' from dS ----\n" + indent + name + "(" + tiles +
                     ", params, " + args[1] + ", " + args[2] + ", " + row0 +
                     ", " + col0 + ");";
  Calls &at = calls.try_emplace(last, Calls{{}, loc}).first->second;
  if (!llvm::is_contained(at.texts, text))
    at.texts.push_back(text);
  return success();
}

} // namespace

std::unique_ptr<Patcher> mlir::cuir::createParamGradPatcher() {
  return std::make_unique<ParamGradPatcher>();
}
