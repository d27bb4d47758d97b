//===- BackwardAnalysis.h - The attention structure of a backward kernel -===//
//
// A backward kernel recomputes the scores S = Q K^T, turns them into the
// forward's weights P with its log-sum-exp, and forms dS = P * (dP - D).
// Transfer puts the variant's scores and mask after S and multiplies dS by
// the score function's derivative; this analysis finds S, P and dS from the
// dataflow of the IR, and the coordinates of the score tile from the
// buffers the kernel reads and accumulates into (K's copy, dQ's
// accumulation), or from the kernel's own mask over S where dQ leaves
// through another worker; a step without either takes those of a masking
// step over the same buffers, as its own loop computes them. Not from op
// order.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_TRANSFER_BACKWARDANALYSIS_H
#define CUIR_TRANSFER_BACKWARDANALYSIS_H

#include "cuir/Dialect/CuIR.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::cuir {

/// One score recomputation of a backward kernel and what it feeds.
struct BackwardSite {
  /// cuir.gemm (or gemm_async) computing S = Q K^T, unscaled.
  Operation *gemm = nullptr;
  /// S once complete.
  Value score;
  /// The exp/exp2 that turns the scores into the forward's weights P.
  Operation *weights = nullptr;
  /// dS = P * (dP - D): the product of P with the gradient of the weights.
  Operation *dScores = nullptr;
  /// The score tile's coordinates: batch, query head, first query row and
  /// first key.
  Value batch, head, qBase, kvBase;
  /// The thread block's KV tile: its first key and its keys (the rows of
  /// the shared K tile; a score tile may read some of them).
  Value kvTile;
  int64_t kvTileKeys = 0;
};

struct BackwardStructure {
  KernelOp kernel;
  /// Empty for a kernel of a backward pass that computes no scores (the
  /// preprocessing of dO * O, the conversion of dQ).
  SmallVector<BackwardSite> sites;
  llvm::StringMap<BlockArgument> params;
};

/// Whether `kernel` belongs to a backward pass: it writes dq, dk or dv, or
/// a cuir.launch_sequence of its module runs it.
bool isPartOfBackwardPass(KernelOp kernel);

/// Finds the score recomputations of a backward-pass kernel; reports what
/// is missing at the ops concerned and fails.
FailureOr<BackwardStructure> analyzeBackward(KernelOp kernel);

/// Whether `v` is computed from `arg`, through the ops of the region that
/// owns `arg`.
bool readsArgument(Value v, BlockArgument arg);

/// Whether `v`, computed in the body of `ew`, reads an element of its input
/// tiles (the score): a mask that does decides per element, not per tile.
bool readsInputElements(Value v, ElementwiseOp ew);

/// The loop over query blocks of a site's steps: the innermost loop around
/// its score GEMM but the one over the site's query head (a step may run
/// inside a loop over the GQA group's heads); null if there is none.
scf::ForOp queryLoop(const BackwardSite &site);
/// The KV head g whose GQA group every score site's head loop walks,
/// `scf.for %h = g * G to g * G + G step 1` with G = Hq / Hkv (the kernel's
/// arguments), or null if some loop is not so.
Value findGroupKvHead(const BackwardStructure &s);

} // namespace mlir::cuir

#endif // CUIR_TRANSFER_BACKWARDANALYSIS_H
