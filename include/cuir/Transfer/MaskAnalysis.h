//===- MaskAnalysis.h - Mask predicates as key intervals --------*- C++ -*-===//
//
// A mask predicate over (q_idx, kv_idx) is affine in the sense the split
// needs when, for every query row q, the visible keys form one interval
// [lo(q), hi(q)) whose bounds are q + c or c, with c independent of q and
// kv (sizes, parameters, constants). Causal, prefix, window masks and their
// intersections are; unions are when the intervals share an end (a prefix
// [-inf, P) with a causal [-inf, q + off + 1)). Such bounds grow with q, so
// a block of rows is bounded by its first and last rows.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_TRANSFER_MASKANALYSIS_H
#define CUIR_TRANSFER_MASKANALYSIS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::cuir {

/// coefQ * q + sum(sign_i * term_i) + constant.
struct AffineBound {
  int64_t coefQ = 0;
  SmallVector<std::pair<Value, int64_t>> terms;
  int64_t constant = 0;
};

/// The keys [lo, hi) visible to a row: lo is the maximum over `lo` of the
/// minimum of each group (a union of suffixes has the smaller start), hi the
/// minimum over `hi` of the maximum of each group (a union of prefixes has
/// the larger end). No groups: unbounded on that side.
struct KeyInterval {
  SmallVector<SmallVector<AffineBound, 2>> lo, hi;
};

/// Analyses `visible`, an i1 value over the coordinate block arguments `q`
/// and `k`. Returns nullopt when the predicate is not one interval per row.
std::optional<KeyInterval> analyzeKeyInterval(Value visible, Value q, Value k);

/// Emits `bound` at `b` with q := `qValue`; values defined inside the
/// region that owns the coordinates are cloned through `outside`.
Value materializeBound(OpBuilder &b, Location loc, const AffineBound &bound,
                       Value qValue, IRMapping &outside, Region *inner);

} // namespace mlir::cuir

#endif // CUIR_TRANSFER_MASKANALYSIS_H
