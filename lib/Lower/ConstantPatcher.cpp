//===- ConstantPatcher.cpp - Kernel parameters replaced by constants ------===//
//
// A transform that replaces a kernel parameter by a constant (the softmax
// scale folded into the variant's scores) makes the statements that read the
// parameter read the constant: its name becomes the literal there. The
// causal flag needs no edit: variant kernels run the non-causal
// instantiation (the manifest says is_causal = 0).
//
//===----------------------------------------------------------------------===//

#include "Patcher.h"

#include "cuir/Lower/CppEmitter.h"

using namespace mlir;
using namespace mlir::cuir;

namespace {

class ConstantPatcher : public Patcher {
public:
  Rewrite getRewrite() const override { return Rewrite::Constant; }

  LogicalResult patch(ArrayRef<Difference> differences,
                      PatchContext &ctx) override {
    llvm::DenseSet<Operation *> written;
    for (const Difference &d : differences) {
      if (d.kind == Difference::Kind::Inserted)
        continue;
      if (d.kind != Difference::Kind::Operand)
        return emitError(d.getLoc()) << "is recorded as a constant rewrite, "
                                        "which only replaces operands";
      if (failed(replaceParameter(d, ctx)))
        return failure();
      written.insert(d.getTargetValue().getDefiningOp());
    }
    return checkAllWritten(differences, written);
  }

private:
  /// The statement reading a parameter reads the constant instead.
  LogicalResult replaceParameter(const Difference &d, PatchContext &ctx) {
    auto param = dyn_cast<BlockArgument>(d.getSourceValue());
    auto cst = d.getTargetValue().getDefiningOp<arith::ConstantOp>();
    if (!param || !cst || !isa<KernelOp>(param.getOwner()->getParentOp()))
      return emitError(d.getLoc())
             << "reads a constant in place of operand #" << d.operand
             << ", which is not a kernel parameter: lowering replaces "
                "parameters by constants only";
    if (argRole(ctx.diff->source, param.getArgNumber()) == "causal")
      return success();
    std::optional<std::string> name = sourceNameOf(param.getLoc());
    std::string why;
    FailureOr<std::string> literal = CppEmitter().expr(cst, why);
    if (!name || failed(literal))
      return emitError(cst.getLoc()) << "cannot name the replaced parameter";
    FileLineColRange r = rangeOf(d.target->getLoc());
    if (!r)
      return emitError(d.getLoc()) << "has no source line to patch";
    return ctx.edit({SourceEdit::ReplaceText, r.getStartLine(), r.getEndLine(),
                     "", *name, *literal},
                    d.getLoc());
  }
};

} // namespace

std::unique_ptr<Patcher> mlir::cuir::createConstantPatcher() {
  return std::make_unique<ConstantPatcher>();
}
