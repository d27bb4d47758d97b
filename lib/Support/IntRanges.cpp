//===- IntRanges.cpp - Signed ranges of integer and index values ----------===//

#include "cuir/Support/IntRanges.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

#include <climits>

using namespace mlir;
using namespace mlir::cuir;

/// A chain of defining ops deeper than this reads as its type's range (the
/// inference is recursive; the bodies it reads are a few dozen ops).
static constexpr unsigned kMaxDepth = 64;

ConstantIntRanges IntRanges::seed(Value v) const {
  unsigned width = ConstantIntRanges::getStorageBitwidth(v.getType());
  if (!v.getType().isIndex() || v.getDefiningOp())
    return ConstantIntRanges::maxRange(width);
  return ConstantIntRanges::fromSigned(APInt(width, 0),
                                       APInt(width, kIndexLimit - 1));
}

ConstantIntRanges IntRanges::of(Value v) { return compute(v, 0); }

/// The range of a loop's induction variable from its bounds (a positive
/// step): [min of the lower bound, max of the upper bound - 1].
static std::optional<ConstantIntRanges>
inductionRange(Value v, function_ref<ConstantIntRanges(Value)> rangeOf) {
  auto arg = dyn_cast<BlockArgument>(v);
  auto loop = arg ? dyn_cast<LoopLikeOpInterface>(arg.getOwner()->getParentOp())
                  : LoopLikeOpInterface();
  if (!loop || loop.getSingleInductionVar() != v)
    return std::nullopt;
  std::optional<OpFoldResult> lb = loop.getSingleLowerBound(),
                              ub = loop.getSingleUpperBound(),
                              step = loop.getSingleStep();
  std::optional<int64_t> stepValue =
      step ? getConstantIntValue(*step) : std::nullopt;
  if (!lb || !ub || !stepValue || *stepValue <= 0)
    return std::nullopt;
  auto boundRange = [&](OpFoldResult b) -> std::optional<ConstantIntRanges> {
    if (auto value = dyn_cast<Value>(b))
      return rangeOf(value);
    if (std::optional<int64_t> c = getConstantIntValue(b))
      return ConstantIntRanges::constant(APInt(64, *c, /*isSigned=*/true));
    return std::nullopt;
  };
  std::optional<ConstantIntRanges> lo = boundRange(*lb), hi = boundRange(*ub);
  if (!lo || !hi || lo->smin().getBitWidth() != 64 ||
      hi->smax().getBitWidth() != 64 || hi->smax().isMinSignedValue() ||
      hi->smax().slt(lo->smin() + 1))
    return std::nullopt;
  return ConstantIntRanges::fromSigned(lo->smin(), hi->smax() - 1);
}

ConstantIntRanges IntRanges::compute(Value v, unsigned depth) {
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  ConstantIntRanges r = seed(v);
  if (depth < kMaxDepth && v.getType().isIndex())
    if (auto iv =
            inductionRange(v, [&](Value b) { return compute(b, depth + 1); }))
      r = *iv;
  if (auto ifOp = v.getDefiningOp<scf::IfOp>();
      ifOp && ifOp.elseBlock() && depth < kMaxDepth) {
    unsigned i = cast<OpResult>(v).getResultNumber();
    r = compute(ifOp.thenYield().getOperand(i), depth + 1)
            .rangeUnion(compute(ifOp.elseYield().getOperand(i), depth + 1));
  }
  auto op = v.getDefiningOp<InferIntRangeInterface>();
  if (op && depth < kMaxDepth &&
      llvm::all_of(op->getOperandTypes(),
                   [](Type t) { return t.isIntOrIndex(); })) {
    SmallVector<ConstantIntRanges> operands;
    for (Value o : op->getOperands())
      operands.push_back(compute(o, depth + 1));
    op.inferResultRanges(operands, [&](Value res, const ConstantIntRanges &c) {
      if (res == v)
        r = c;
    });
  }
  if (heldInInt && v.getType().isIndex() && heldInInt(v))
    r = r.intersection(ConstantIntRanges::fromSigned(
        APInt(64, INT32_MIN, /*isSigned=*/true), APInt(64, INT32_MAX)));
  memo.try_emplace(v, r);
  return r;
}

bool IntRanges::within(Value v, int64_t lo, int64_t hi) {
  ConstantIntRanges r = of(v);
  if (r.smin().getBitWidth() > 64)
    return false;
  return r.smin().getSExtValue() >= lo && r.smax().getSExtValue() <= hi;
}
