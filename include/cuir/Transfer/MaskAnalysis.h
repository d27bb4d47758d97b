//===- MaskAnalysis.h - Mask predicates as key intervals --------*- C++ -*-===//
//
// A mask predicate over (q_idx, kv_idx) is read by its meaning: it is
// translated into a Presburger set over the dimensions (q, kv), with one
// symbol for every term independent of q and kv (sizes, parameters, loaded
// values), so that equivalent spellings give the same set. A predicate whose
// value is not a union of linear constraints in (q, kv) (a load indexed by q,
// a division, a product of coordinates, a float compare) is not linear.
//
// The split needs more: for every query row q, the visible keys form one
// interval [lo(q), hi(q)) whose bounds are q + c or c, with c independent of
// q and kv. Causal, prefix, window masks and their intersections are; unions
// are when the rows' intervals touch (a prefix [-inf, P) with a causal
// [-inf, q + off + 1)). Such bounds grow with q, so a block of rows is
// bounded by its first and last rows.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_TRANSFER_MASKANALYSIS_H
#define CUIR_TRANSFER_MASKANALYSIS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Value.h"

#include <optional>
#include <string>

namespace mlir::cuir {

/// coefQ * q + coefKv * kv + sum(coef_i * term_i) + constant >= 0, or == 0
/// when `isEquality`. Terms are values independent of q and kv: index or
/// integer values standing for their (signed) value, i1 values for 1 when
/// true and 0 when false.
struct LinearConstraint {
  int64_t coefQ = 0, coefKv = 0;
  SmallVector<std::pair<Value, int64_t>> terms;
  int64_t constant = 0;
  bool isEquality = false;
};

/// A mask as a union of convex pieces, each a conjunction of constraints:
/// on in-range coordinates (0 <= q, kv < 2^30, which the pieces leave out,
/// with what they imply) the mask holds exactly where some piece does. No
/// pieces: nothing is visible; a piece without constraints: everything is.
struct LinearMask {
  SmallVector<SmallVector<LinearConstraint>> pieces;
};

/// Why a mask is not linear, or not one interval of keys per row.
struct MaskDiagnosis {
  /// The first op (from the predicate's root) whose value is not linear in
  /// (q, kv), with why; null when the mask is linear.
  Operation *nonLinearOp = nullptr;
  std::string reason;
  /// Whether that op's value may be linear, but as more pieces than the
  /// analysis keeps.
  bool tooLarge = false;
  /// For a linear mask: how many convex pieces it has after coalescing.
  unsigned numPieces = 0;
};

/// Analyses `visible`, an i1 value over the coordinate block arguments `q`
/// and `k`, as a union of linear constraints in q, kv and terms independent
/// of them (integer arithmetic of a fixed width only where it provably does
/// not wrap). Returns nullopt, filling `why`, when it is not linear. The
/// runtime block mask can decide a tile empty or full from these pieces
/// without evaluating the predicate per pair.
std::optional<LinearMask> analyzeLinearMask(Value visible, Value q, Value k,
                                            MaskDiagnosis *why = nullptr);

/// Prints `mask` as `{c and c ...} or {...}`, each constraint a sum over
/// q_idx, kv_idx and the terms (named by `name`) compared with 0.
void printLinearMask(raw_ostream &os, const LinearMask &mask,
                     function_ref<void(raw_ostream &, Value)> name);

/// How a linear mask relates to a kernel's own causal mask, the
/// bottom-right aligned kv <= q + Nkv - Nq, on in-range pairs and for every
/// value of the mask's terms (`nq`, `nkv`: the terms that are the sizes).
struct CausalComparison {
  /// No visible pair lies past the diagonal.
  bool insideCausal = false;
  /// Every pair on or below the diagonal is visible.
  bool coversCausal = false;
};
CausalComparison compareWithCausal(const LinearMask &mask, Value nq, Value nkv);

/// coefQ * q + sum(coef_i * term_i) + constant.
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

/// Analyses `visible` as `analyzeLinearMask` does and returns the one
/// interval of keys per row it is, proved equal to the mask on in-range
/// coordinates; nullopt, filling `why`, when the mask is not linear or not
/// one interval with bounds q + c or c. Equal masks give equal intervals.
std::optional<KeyInterval> analyzeKeyInterval(Value visible, Value q, Value k,
                                              MaskDiagnosis *why = nullptr);

/// Emits `bound` at `b` with q := `qValue`; values defined inside the
/// region that owns the coordinates are cloned through `outside`, integer
/// terms cast to index once per `indexCasts` when given.
Value materializeBound(OpBuilder &b, Location loc, const AffineBound &bound,
                       Value qValue, IRMapping &outside, Region *inner,
                       DenseMap<Value, Value> *indexCasts = nullptr);

} // namespace mlir::cuir

#endif // CUIR_TRANSFER_MASKANALYSIS_H
